/** Time for the realtime code: the wall clock in production, a hand-moved one in unit tests. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};

/** One timer that can be re-armed; arming it again replaces the pending call. */
export class Timer {
  private cancel: (() => void) | undefined;

  constructor(private readonly clock: Clock) {}

  get armed(): boolean {
    return this.cancel !== undefined;
  }

  /** Calls `fn` after `ms`, replacing any pending call. */
  arm(ms: number, fn: () => void): void {
    this.clear();
    const cancel = this.clock.after(ms, () => {
      if (this.cancel !== cancel) return;
      this.cancel = undefined;
      fn();
    });
    this.cancel = cancel;
  }

  clear(): void {
    this.cancel?.();
    this.cancel = undefined;
  }
}
