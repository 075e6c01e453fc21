/**
 * When a socket may send its unacknowledged messages again. A worker that is only behind (a loaded
 * machine) acknowledges late; sending it every kept message again each heartbeat doubles its load and
 * delays it more, until the resends are all the gateway and the bus carry (measured: a gateway at 15 GB
 * under 1,000 LITE sessions). So the window goes out again at most once per interval, which starts at a
 * heartbeat, doubles with every resend that brings no acknowledgement, and is back to a heartbeat once
 * one arrives.
 */
export class ResendPacing {
  private interval: number;
  private lastResendAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {
    this.interval = baseMs;
  }

  /** How long the oldest message may wait for its acknowledgement before the window goes out again. */
  get intervalMs(): number {
    return this.interval;
  }

  mayResend(now: number): boolean {
    return now - this.lastResendAt >= this.interval;
  }

  resent(now: number): void {
    this.lastResendAt = now;
    this.interval = Math.min(this.interval * 2, this.maxMs);
  }

  /** A worker acknowledged something new. */
  acknowledged(): void {
    this.interval = this.baseMs;
  }
}
