import type { Bus, DurableConsumerOptions, Subscription } from "@avatar/bus";
import type { SessionEnded } from "@avatar/contracts/sessions";
import { consumeEvent, topics } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MemoryContext } from "./context.js";
import { addSessionEpisode } from "./episodes.js";

export const CONSUMER_NAME = "memory";

/**
 * Handles one session-ended event: a session that ran with a memory adds its episode. Safe to run twice
 * for one event (the episode is added once). Rules that will never pass (the memory was deleted, the
 * session is LITE or of another space) are logged and the event is done; anything else (a service that
 * did not answer) throws, so the bus delivers the event again.
 */
export async function handleSessionEnded(ctx: MemoryContext, event: SessionEnded): Promise<void> {
  const session = event.session;
  if (!session?.memoryId) return;
  const fields = { session_id: session.id, memory_id: session.memoryId };
  let outcome: Awaited<ReturnType<typeof addSessionEpisode>>;
  try {
    outcome = await addSessionEpisode(ctx, session.memoryId, session.id);
  } catch (err) {
    if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) {
      ctx.log.info("session episode not added", { ...fields, reason: err.rawMessage });
      return;
    }
    throw err;
  }
  if (outcome.kind === "no_transcript") {
    ctx.log.info("session ended without transcript entries; no episode added", fields);
  } else if (outcome.kind === "added") {
    ctx.log.info("session episode added", fields);
  } else {
    ctx.log.debug("session episode already present", fields);
  }
}

/**
 * Consumes events.sessions.ended as consumer "memory" (replicas share the work). A failing event is
 * retried with growing delays for longer than the outage a dependency may have (the bus's defaults),
 * then kept as a dead letter for an operator to replay; it is never dropped.
 */
export function consumeSessionEnded(
  bus: Bus,
  ctx: MemoryContext,
  options?: DurableConsumerOptions,
): Promise<Subscription> {
  return consumeEvent(
    bus,
    topics.sessionEnded,
    CONSUMER_NAME,
    (event) => handleSessionEnded(ctx, event),
    options,
  );
}
