/** One client message relayed to the session's worker and not acknowledged yet. */
export interface Unacknowledged {
  seq: number;
  utf8: Uint8Array;
  /** When it was last sent (ms). */
  sentAt: number;
}

export interface OutboundLimits {
  /** The most bytes of messages kept for sending again. */
  maxBytes: number;
  /** The most messages kept for sending again. */
  maxCount: number;
  /** Shared by every socket of the gateway: the most bytes all of them keep together. */
  shared?: ResendBudget;
}

/** The bytes every socket of one gateway keeps for sending again, and the most they may keep together. */
export class ResendBudget {
  used = 0;
  constructor(readonly maxBytes: number) {}
}

/**
 * A socket's client messages on their way to the session's worker: each gets the next number, and is
 * kept until a worker acknowledges it, so that one lost on the way (a bus outage, a worker that died, a
 * takeover in progress) can be sent again. Beyond the limits the oldest are given up: the floor of
 * acknowledged numbers moves past them (the worker does not wait for them) and the caller tells the
 * client how many were lost.
 */
export class OutboundMessages {
  private nextSeq = 1;
  private floor = 0;
  private readonly kept: Unacknowledged[] = [];
  private bytes = 0;

  constructor(private readonly limits: OutboundLimits) {}

  /** The number of the last message numbered (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Every message up to here was acknowledged (or given up). */
  get ackedSeq(): number {
    return this.floor;
  }

  get size(): number {
    return this.kept.length;
  }

  /** Numbers and keeps a message; answers its number and how many old ones were given up for it. */
  add(utf8: Uint8Array, now: number): { seq: number; dropped: number } {
    const seq = this.nextSeq++;
    this.kept.push({ seq, utf8, sentAt: now });
    this.count(utf8.length);
    const shared = this.limits.shared;
    let dropped = 0;
    while (
      this.kept.length > 1 &&
      (this.bytes > this.limits.maxBytes ||
        this.kept.length > this.limits.maxCount ||
        (shared !== undefined && shared.used > shared.maxBytes))
    ) {
      const oldest = this.kept.shift();
      if (!oldest) break;
      this.count(-oldest.utf8.length);
      this.floor = oldest.seq;
      dropped++;
    }
    return { seq, dropped };
  }

  /** The last message numbered could not be sent at all: its number goes to the next one. */
  unsend(seq: number): void {
    const last = this.kept.at(-1);
    if (!last || last.seq !== seq || seq !== this.lastSeq) return;
    this.kept.pop();
    this.count(-last.utf8.length);
    this.nextSeq = seq;
  }

  /** A worker took every message up to `seq`. */
  acknowledge(seq: number): void {
    if (seq > this.lastSeq) return;
    while (this.kept.length > 0 && (this.kept[0]?.seq ?? 0) <= seq) {
      const taken = this.kept.shift();
      if (taken) this.count(-taken.utf8.length);
    }
    this.floor = Math.max(this.floor, seq);
  }

  /** Every message not acknowledged, oldest first, marked sent at `now` (to send them again). */
  resend(now: number): Unacknowledged[] {
    return this.resendFrom(0, now);
  }

  /** The first message not acknowledged numbered `seq` or later. */
  firstFrom(seq: number): Unacknowledged | undefined {
    return this.kept.find((m) => m.seq >= seq);
  }

  /** The messages not acknowledged from number `seq` on, oldest first, marked sent at `now`. */
  resendFrom(seq: number, now: number): Unacknowledged[] {
    const from = this.kept.filter((m) => m.seq >= seq);
    for (const m of from) m.sentAt = now;
    return from;
  }

  /** Gives up everything kept (the socket closed): its bytes go back to the shared budget. */
  clear(): void {
    this.count(-this.bytes);
    this.kept.length = 0;
  }

  private count(bytes: number): void {
    this.bytes += bytes;
    if (this.limits.shared) this.limits.shared.used += bytes;
  }

  /** Whether the oldest message waits for an acknowledgement since before `before`. */
  overdue(before: number): boolean {
    const oldest = this.kept[0];
    return oldest !== undefined && oldest.sentAt < before;
  }
}
