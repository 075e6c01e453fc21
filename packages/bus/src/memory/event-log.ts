/** The in-process stand-in for the JetStream events stream: an append-only log with max age and msgId dedupe. */
import type { BusHeaders } from "../bus.js";
import { DEDUPE_WINDOW_MS, EVENTS_MAX_AGE_MS } from "../durable-settings.js";
import { subjectMatches } from "../subject.js";

export interface StoredEvent {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: BusHeaders;
  readonly storedAt: number;
}

export class EventLog {
  readonly #entries: StoredEvent[] = [];
  /** msgId -> time it was first stored; insertion order is time order. */
  readonly #msgIds = new Map<string, number>();
  readonly #deleted = new Set<number>();
  #nextSeq = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Stores the event; returns null when `msgId` was already stored within the dedupe window. */
  append(subject: string, data: Uint8Array, headers: BusHeaders, msgId?: string): StoredEvent | null {
    const now = this.now();
    this.#prune(now);
    if (msgId !== undefined) {
      if (this.#msgIds.has(msgId)) return null;
      this.#msgIds.set(msgId, now);
    }
    const event = {
      seq: this.#nextSeq++,
      subject,
      data: data.slice(),
      headers: { ...headers },
      storedAt: now,
    };
    this.#entries.push(event);
    return event;
  }

  get(seq: number): StoredEvent | undefined {
    this.#prune(this.now());
    const first = this.#entries[0];
    if (!first || this.#deleted.has(seq)) return undefined;
    return this.#entries[seq - first.seq];
  }

  /** Removes one event; false when there was none at `seq`. */
  delete(seq: number): boolean {
    if (!this.get(seq)) return false;
    this.#deleted.add(seq);
    return true;
  }

  /** The first event at or after `fromSeq` whose subject matches `filter`. */
  next(fromSeq: number, filter: string): StoredEvent | undefined {
    this.#prune(this.now());
    const first = this.#entries[0];
    if (!first) return undefined;
    for (let i = Math.max(0, fromSeq - first.seq); i < this.#entries.length; i++) {
      const event = this.#entries[i];
      if (event && !this.#deleted.has(event.seq) && subjectMatches(filter, event.subject)) return event;
    }
    return undefined;
  }

  /** The sequence the next appended event will get. */
  get endSeq(): number {
    return this.#nextSeq;
  }

  #prune(now: number): void {
    while (this.#entries.length > 0 && now - (this.#entries[0]?.storedAt ?? now) >= EVENTS_MAX_AGE_MS) {
      const gone = this.#entries.shift();
      if (gone) this.#deleted.delete(gone.seq);
    }
    for (const [id, storedAt] of this.#msgIds) {
      if (now - storedAt < DEDUPE_WINDOW_MS) break;
      this.#msgIds.delete(id);
    }
  }
}
