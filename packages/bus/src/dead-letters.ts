/**
 * Dead letters: a durable message whose handler kept failing is not dropped. After its last delivery it is
 * stored again under `events.deadletter.<consumer>` with headers saying where it came from and why it
 * failed; an operator lists them (`avatarctl deadletter list`) and replays them once the cause is fixed
 * (`avatarctl deadletter replay`), which publishes the original message again under a fresh message id
 * (so the stream's de-duplication does not discard it) and removes the dead letter.
 */
import type { Bus, BusHeaders, DurableMessage, StoredMessage } from "./bus.js";
import { DEAD_LETTER_PREFIX } from "./durable-settings.js";

export const DEAD_LETTER_FILTER = `${DEAD_LETTER_PREFIX}>`;

/** Headers a dead letter carries besides the original message's own. */
export const deadLetterHeaders = {
  subject: "Avatar-Dead-Letter-Subject",
  consumer: "Avatar-Dead-Letter-Consumer",
  deliveries: "Avatar-Dead-Letter-Deliveries",
  error: "Avatar-Dead-Letter-Error",
} as const;

const OWN = new Set(Object.values(deadLetterHeaders).map((h) => h.toLowerCase()));

/** The dead letter of a message given up by `consumer`. */
export function deadLetterOf(
  msg: DurableMessage,
  consumer: string,
  error: string,
): { data: Uint8Array; headers: BusHeaders } {
  return {
    data: msg.data,
    headers: {
      ...msg.headers,
      [deadLetterHeaders.subject]: msg.subject,
      [deadLetterHeaders.consumer]: consumer,
      [deadLetterHeaders.deliveries]: String(msg.deliveryCount),
      // Header values are single lines.
      [deadLetterHeaders.error]: error.replace(/[\r\n]+/g, " ").slice(0, 500),
    },
  };
}

export interface DeadLetter {
  seq: number;
  /** The subject the message was published to. */
  subject: string;
  consumer: string;
  deliveries: number;
  error: string;
  deadAt: Date;
  data: Uint8Array;
  /** The original message's headers. */
  headers: BusHeaders;
}

function readDeadLetter(stored: StoredMessage): DeadLetter {
  const h = stored.headers;
  const headers = Object.fromEntries(Object.entries(h).filter(([k]) => !OWN.has(k.toLowerCase())));
  return {
    seq: stored.seq,
    subject: h[deadLetterHeaders.subject] ?? "",
    consumer: h[deadLetterHeaders.consumer] ?? stored.subject.slice(DEAD_LETTER_PREFIX.length),
    deliveries: Number(h[deadLetterHeaders.deliveries] ?? 0),
    error: h[deadLetterHeaders.error] ?? "",
    deadAt: stored.storedAt,
    data: stored.data,
    headers,
  };
}

/** The dead letters kept (a week, as every durable event), oldest first; of one consumer if named. */
export async function listDeadLetters(
  bus: Bus,
  options: { consumer?: string; limit?: number } = {},
): Promise<DeadLetter[]> {
  const limit = options.limit ?? 1_000;
  const out: DeadLetter[] = [];
  let fromSeq = 1;
  while (out.length < limit) {
    const page = await bus.readDurable(DEAD_LETTER_FILTER, { fromSeq, limit: 100 });
    for (const stored of page) {
      const letter = readDeadLetter(stored);
      if (!options.consumer || letter.consumer === options.consumer) out.push(letter);
    }
    const last = page.at(-1);
    if (!last || page.length < 100) break;
    fromSeq = last.seq + 1;
  }
  return out.slice(0, limit);
}

/**
 * Publishes a dead letter's message again to its original subject (every consumer of it sees it again;
 * handlers are idempotent) and removes the dead letter. False when there is no dead letter at `seq`.
 */
export async function replayDeadLetter(bus: Bus, seq: number): Promise<boolean> {
  const [stored] = await bus.readDurable(DEAD_LETTER_FILTER, { fromSeq: seq, limit: 1 });
  if (!stored || stored.seq !== seq) return false;
  const letter = readDeadLetter(stored);
  if (!letter.subject) return false;
  // A fresh id: the original's is still in the de-duplication window when the replay is quick; a second
  // replay of the same dead letter counts once.
  await bus.publishDurable(letter.subject, letter.data, { headers: letter.headers, msgId: `replay-${seq}` });
  await bus.deleteDurable(seq);
  return true;
}
