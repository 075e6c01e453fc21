import type { SessionsService } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import type { Client } from "@connectrpc/connect";
import { BatchWriter } from "./batch-writer.js";
import type { Clock } from "./clock.js";
import type { StoredEvent } from "./session-context.js";

/** The sessions service takes at most this many events in one call. */
const MAX_EVENTS_PER_CALL = 1000;
/**
 * How long stored events wait for others: a worker with a thousand sessions makes a few calls a second
 * instead of one per event. They are the sessions' history, read after the fact, not live.
 */
export const SESSION_EVENTS_LINGER_MS = 250;

interface Item {
  sessionId: string;
  event: StoredEvent;
}

/**
 * The stored events of every session a worker runs, written together (AppendSessionEventsBatch), in
 * order and at least once, with BatchWriter's retries.
 */
export class SessionEventsWriter {
  private readonly writer: BatchWriter<Item>;

  constructor(
    sessions: Pick<Client<typeof SessionsService>, "appendSessionEventsBatch">,
    clock: Clock,
    private readonly log: Logger,
    lingerMs = SESSION_EVENTS_LINGER_MS,
  ) {
    this.writer = new BatchWriter<Item>(
      async (items) => {
        const res = await sessions.appendSessionEventsBatch({ sessions: grouped(items) });
        if (res.unknownSessionIds.length > 0) {
          this.log.warn("session events of unknown sessions were not stored", {
            sessionIds: res.unknownSessionIds,
          });
        }
      },
      clock,
      log,
      "session events",
      { maxBatch: MAX_EVENTS_PER_CALL, lingerMs },
    );
  }

  /** Where one session's runner writes its events. */
  forSession(sessionId: string): { write(events: StoredEvent[]): void } {
    return { write: (events) => this.writer.write(events.map((event) => ({ sessionId, event }))) };
  }

  /** Writes what waits at once; resolves once every event written so far is stored (or given up). */
  flush(): Promise<void> {
    return this.writer.flush();
  }
}

/** Consecutive events of one session as one group, in order. */
function grouped(items: Item[]): { sessionId: string; events: SentEvent[] }[] {
  const groups: { sessionId: string; events: SentEvent[] }[] = [];
  for (const { sessionId, event } of items) {
    const sent = asSent(event);
    const last = groups.at(-1);
    if (last?.sessionId === sessionId) last.events.push(sent);
    else groups.push({ sessionId, events: [sent] });
  }
  return groups;
}

type SentEvent = Omit<StoredEvent, "payload"> & { payloadJson: string };

/** The payload goes as JSON text: as a Struct, a call of a thousand events took 60 ms to encode. */
function asSent({ payload, ...event }: StoredEvent): SentEvent {
  return { ...event, payloadJson: JSON.stringify(payload ?? {}) };
}
