import type { Logger } from "@avatar/runtime";
import type { Clock } from "./clock.js";
import { isTransient } from "./session-reports.js";

/** Together longer than an outage a session is expected to survive (SESSIONS_OUTAGE_BOUND_MS, 60 s). */
const RETRY_DELAYS_MS = [200, 1_000, 3_000, 10_000, 20_000, 30_000];

export interface BatchOptions {
  /** Most items one write takes (default 100). */
  maxBatch?: number;
  /**
   * How long a write waits for more items when it has fewer than `maxBatch` (default 0: it goes at
   * once, and what comes meanwhile waits for the next).
   */
  lingerMs?: number;
}

/**
 * Writes items through the sessions service in order, one batch at a time, retrying a failed write
 * with the same items (each carries an id the sessions service stores once, so a retry after a lost
 * answer adds nothing) for as long as the sessions service may be down; a refused write is not retried.
 */
export class BatchWriter<T> {
  private queue: T[] = [];
  private running: Promise<void> | undefined;
  private readonly maxBatch: number;
  private readonly lingerMs: number;
  private flushing = false;
  private endLinger: (() => void) | undefined;

  constructor(
    private readonly append: (items: T[]) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** What the items are, for log lines ("transcript entries"). */
    private readonly what: string,
    options: BatchOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100;
    this.lingerMs = options.lingerMs ?? 0;
  }

  write(items: T[]): void {
    this.queue.push(...items);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once everything written so far is stored (or given up). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Writes what waits without lingering (the worker stops); resolves once it is stored or given up. */
  async flush(): Promise<void> {
    this.flushing = true;
    this.endLinger?.();
    try {
      await this.idle();
    } finally {
      this.flushing = false;
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.lingerMs > 0 && !this.flushing && this.queue.length < this.maxBatch) await this.linger();
      const batch = this.queue.splice(0, this.maxBatch);
      await this.writeWithRetries(batch);
    }
  }

  private linger(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.endLinger = resolve;
      this.clock.after(this.lingerMs, resolve);
    }).finally(() => {
      this.endLinger = undefined;
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.clock.after(ms, resolve));
  }

  private async writeWithRetries(batch: T[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.append(batch);
        return;
      } catch (err) {
        const delay = isTransient(err) ? RETRY_DELAYS_MS[attempt] : undefined;
        if (delay === undefined) {
          this.log.error(`${this.what} lost after retries`, { count: batch.length, err });
          return;
        }
        this.log.warn(`${this.what} write failed; retrying`, { attempt: attempt + 1, err });
        await this.sleep(delay);
      }
    }
  }
}
