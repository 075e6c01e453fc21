import type { Logger } from "@avatar/runtime";
import type { Clock } from "./clock.js";

const RETRY_DELAYS_MS = [200, 1_000, 3_000, 10_000];

/**
 * Writes items through the sessions service in order, one batch at a time, retrying a failed write
 * with the same items (each carries an id the sessions service stores once, so a retry after a lost
 * answer adds nothing). Gives up after a few tries and logs how many were lost.
 */
export class BatchWriter<T> {
  private queue: T[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly append: (items: T[]) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** What the items are, for log lines ("transcript entries"). */
    private readonly what: string,
  ) {}

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

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, 100);
      await this.writeWithRetries(batch);
    }
  }

  private async writeWithRetries(batch: T[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.append(batch);
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          this.log.error(`${this.what} lost after retries`, { count: batch.length, err });
          return;
        }
        this.log.warn(`${this.what} write failed; retrying`, { attempt: attempt + 1, err });
        await new Promise<void>((resolve) => this.clock.after(delay, resolve));
      }
    }
  }
}
