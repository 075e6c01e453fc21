import type { Bus } from "@avatar/bus";
import type { Logger } from "./log.js";

/**
 * What became of a message handed to a TurnPublisher: `queued` (it leaves at the end of the turn),
 * `refused` (the bus will never carry it: it is closed, or the message is larger than it carries) or
 * `backlogged` (the bus holds more unsent bytes than the publisher's bound: it may take it later).
 */
export type PublishOutcome = "queued" | "refused" | "backlogged";

export interface TurnPublisherOptions {
  /** Names the messages in warnings. */
  what?: string;
  /**
   * The most bytes the bus may hold unsent (Bus.unsentBytes, plus what waits for the end of the turn)
   * for a message to be taken; unbounded when not given.
   */
  maxUnsentBytes?: number;
}

/**
 * Messages handed to the bus together once per turn of the event loop (setImmediate) rather than each
 * as it is made. The NATS client writes to its socket once for what was published since its last write
 * (a microtask later), and every input a process reads (an audio chunk at a worker, a client message at
 * a gateway) is a turn of its own, so publishing each as it came cost a socket write per input;
 * gathered, what all the inputs read in one turn made leaves in one write. Messages keep their order,
 * and leave before the next turn's input is read. What the bus would refuse now is refused at once, so
 * that its caller can say so; what it refuses when the turn ends (it closed in between) is counted in
 * one warning.
 *
 * With `maxUnsentBytes`, a bus that does not get its messages out (a NATS server that is slow or gone:
 * the client keeps every publish) makes the publisher turn messages away rather than grow without end.
 */
export class TurnPublisher {
  private waiting: { subject: string; data: Uint8Array }[] = [];
  private waitingBytes = 0;
  private scheduled = false;
  /** Messages turned away since the backlog began, or null while there is none. */
  private backlogged: number | null = null;
  private readonly what: string;
  private readonly maxUnsentBytes: number;

  constructor(
    private readonly bus: Pick<Bus, "publish" | "status" | "maxPayload" | "unsentBytes">,
    private readonly log: Logger,
    options: TurnPublisherOptions = {},
  ) {
    this.what = options.what ?? "messages";
    this.maxUnsentBytes = options.maxUnsentBytes ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Queues the message for the end of the turn, unless the bus would refuse it or is backlogged. A
   * `control` message (small, and saying that something is still alive: a socket's heartbeat) is never
   * held back.
   */
  publish(subject: string, data: Uint8Array, options: { control?: boolean } = {}): PublishOutcome {
    const status = this.bus.status();
    if (status === "closed" || data.byteLength > this.bus.maxPayload()) {
      this.log.warn(`${this.what} not published`, { subject, bytes: data.byteLength, status });
      return "refused";
    }
    if (!options.control && this.overBound(data.byteLength)) return "backlogged";
    this.waiting.push({ subject, data });
    this.waitingBytes += data.byteLength;
    if (this.scheduled) return "queued";
    this.scheduled = true;
    setImmediate(() => this.flush());
    return "queued";
  }

  /**
   * Whether a message of `bytes` would be held back now: a caller with much to send (messages held back
   * before) asks before it builds them.
   */
  wouldHoldBack(bytes: number): boolean {
    if (this.maxUnsentBytes === Number.POSITIVE_INFINITY) return false;
    const bound = this.backlogged === null ? this.maxUnsentBytes : this.maxUnsentBytes / 2;
    return this.bus.unsentBytes() + this.waitingBytes + bytes > bound;
  }

  /** Publishes what waits now (a process stopping calls it before its bus closes). */
  flush(): void {
    this.scheduled = false;
    const waiting = this.waiting;
    this.waiting = [];
    this.waitingBytes = 0;
    let failed = 0;
    let firstError: unknown;
    for (const { subject, data } of waiting) {
      try {
        this.bus.publish(subject, data);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
    // A closed bus refuses every message alike: one line says so.
    if (failed > 0) this.log.warn(`${this.what} were not published`, { failed, err: firstError });
  }

  /**
   * Whether `bytes` more would pass the bound. A backlog lasts until the unsent bytes are down to half
   * the bound, so that a bus at the bound does not take and refuse in turn; it is reported when it
   * begins and when it ends.
   */
  private overBound(bytes: number): boolean {
    if (this.wouldHoldBack(bytes)) {
      if (this.backlogged === null) {
        const unsent = this.bus.unsentBytes() + this.waitingBytes;
        this.backlogged = 0;
        this.log.warn(`${this.what} held back: the bus has too much unsent`, {
          unsentBytes: unsent,
          maxUnsentBytes: this.maxUnsentBytes,
          status: this.bus.status(),
        });
      }
      this.backlogged++;
      return true;
    }
    if (this.backlogged !== null) {
      this.log.info(`${this.what} taken again: the bus caught up`, { heldBack: this.backlogged });
      this.backlogged = null;
    }
    return false;
  }
}
