import type { Clock } from "./clock.js";

/**
 * A session's client activity on its way to the sessions service (it resets the idle timer). Activity
 * rides the worker's next heartbeat: `pending` is the latest moment not yet carried by an answered one,
 * so a worker with a thousand busy sessions sends no call per session. An explicit keep-alive is
 * reported at once (its own call), unless one went out within the last second.
 */
export class ActivityReporter {
  private latest: number | undefined;
  private lastKeepAlive = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly report: (at: number) => void,
  ) {}

  /** A client event arrived. */
  touch(): void {
    if (!this.stopped) this.latest = this.clock.now();
  }

  /** The client asked to keep the session alive. */
  keepAlive(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    if (now - this.lastKeepAlive < 1_000) return;
    this.lastKeepAlive = now;
    this.latest = undefined;
    this.report(now);
  }

  /** The latest activity no answered heartbeat has carried (ms), if any. */
  get pending(): number | undefined {
    return this.stopped ? undefined : this.latest;
  }

  /** A heartbeat carrying `at` was answered: what came after it waits for the next one. */
  carried(at: number): void {
    if (this.latest !== undefined && this.latest <= at) this.latest = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.latest = undefined;
  }
}
