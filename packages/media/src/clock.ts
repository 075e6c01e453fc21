/**
 * The time a renderer paces its frames by. Injected everywhere time is read, so tests drive it and a
 * clock set 400 days ahead changes nothing.
 */
export interface MediaClock {
  /** Milliseconds (epoch or any monotonic origin; frames carry it as `at`). */
  now(): number;
  /** Resolves after `ms` of this clock's time, or at once when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The machine's clock. */
export const systemClock: MediaClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
    }),
};

/**
 * A clock whose time moves only when someone sleeps on it (or calls advance): a renderer on it produces
 * frames as fast as they are consumed, with the timestamps real time would give. For tests and benchmarks.
 */
export class VirtualClock implements MediaClock {
  constructor(private time = 0) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
  async sleep(ms: number): Promise<void> {
    if (ms > 0) this.time += ms;
  }
}
