import { type Clock, Timer } from "./clock.js";

/**
 * Client activity reported to the sessions service (it resets the idle timer), throttled: at most one
 * report per interval, the first at once and, when more activity came during the interval, one more at
 * its end, so the last activity is never lost. An explicit keep-alive is reported at once unless a
 * report went out in the last second.
 */
export class ActivityReporter {
  private lastReport = Number.NEGATIVE_INFINITY;
  private pending = false;
  private readonly trailing: Timer;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly report: () => void,
  ) {
    this.trailing = new Timer(clock);
  }

  /** A client event arrived. */
  touch(): void {
    if (this.stopped) return;
    const since = this.clock.now() - this.lastReport;
    if (since >= this.intervalMs) {
      this.send();
      return;
    }
    this.pending = true;
    if (!this.trailing.armed) this.trailing.arm(this.intervalMs - since, () => this.flush());
  }

  /** The client asked to keep the session alive. */
  keepAlive(): void {
    if (this.stopped) return;
    if (this.clock.now() - this.lastReport < Math.min(1_000, this.intervalMs)) return;
    this.send();
  }

  stop(): void {
    this.stopped = true;
    this.trailing.clear();
  }

  private flush(): void {
    if (this.pending && !this.stopped) this.send();
  }

  private send(): void {
    this.pending = false;
    this.trailing.clear();
    this.lastReport = this.clock.now();
    this.report();
  }
}
