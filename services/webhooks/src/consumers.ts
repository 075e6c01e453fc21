import type { Bus, Subscription } from "@avatar/bus";
import { SessionMode, SessionSource } from "@avatar/contracts/common";
import type { Session } from "@avatar/contracts/sessions";
import { consumeEvent, topics } from "@avatar/runtime";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Kysely } from "kysely";
import { anyoneWants, fanOut } from "./fanout.js";
import * as messages from "./messages.js";
import type { WebhooksDatabase } from "./schema.js";
import type { Subscribers } from "./subscribers.js";

export interface ConsumerDeps {
  db: Kysely<WebhooksDatabase>;
  bus: Bus;
  subscribers: Subscribers;
  now: () => Date;
  settleMs: number;
  /** New deliveries are waiting: the dispatcher should look now. */
  kick(): void;
}

/**
 * The events webhooks announce, taken from the bus (durable consumers: each event is handled by one
 * replica, again after a failure) and turned into deliveries. Handling an event twice is harmless: the
 * delivery of one message to one endpoint exists once.
 */
export async function consumeEvents(deps: ConsumerDeps): Promise<Subscription[]> {
  const { db, subscribers, now } = deps;
  const deliver = async (message: messages.WebhookMessage | undefined) => {
    if (message && (await fanOut(db, subscribers, message, now())) > 0) deps.kick();
  };
  return Promise.all([
    consumeEvent(deps.bus, topics.sessionStarted, "webhooks_session_started", async ({ session }) => {
      if (session) await deliver(messages.sessionStarted(session));
    }),
    consumeEvent(deps.bus, topics.sessionEnded, "webhooks_session_ended", async ({ session }) => {
      if (!session) return;
      await deliver(messages.sessionEnded(session));
      await scheduleTranscriptCheck(deps, session);
    }),
    consumeEvent(deps.bus, topics.memoryCreated, "webhooks_memory_created", async (event) => {
      await deliver(messages.memoryCreated(event));
    }),
  ]);
}

/** FULL and embed sessions keep transcripts; whether this one has any is checked once it has settled. */
async function scheduleTranscriptCheck(deps: ConsumerDeps, session: Session): Promise<void> {
  const keepsTranscript = session.mode === SessionMode.FULL || session.source === SessionSource.EMBED;
  if (!keepsTranscript || !session.endedAt) return;
  if (!(await anyoneWants(deps.subscribers, session.spaceId, "session.transcript_ready"))) return;
  const endedAt = timestampDate(session.endedAt);
  await deps.db
    .insertInto("transcript_checks")
    .values({
      session_id: session.id,
      space_id: session.spaceId,
      ended_at: endedAt,
      due_at: new Date(deps.now().getTime() + deps.settleMs),
    })
    .onConflict((oc) => oc.column("session_id").doNothing())
    .execute();
}
