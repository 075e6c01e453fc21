/** One item waiting in a TurnBatch, and how to answer its caller. */
export interface Pending<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export interface TurnBatchOptions<T> {
  /** The most items one batch takes; the rest wait for the next. */
  maxItems: number;
  /** Items with the same key never share a batch (the later one waits for the next batch). */
  key?: (item: T) => string;
  /**
   * The most flushes out at once (unlimited unless told). At the limit, the items that come wait for a
   * flush to return and then go together at once: group commit, where each batch is one statement and
   * the next one gathers while the last is out.
   */
  maxInFlight?: number | undefined;
}

/**
 * Items added in the same turn of the event loop are handed to `flush` together, at the end of that turn
 * (setImmediate): under load that is one round trip for several callers, alone an item waits for nothing
 * but the end of the current turn. With `maxInFlight`, the items that come while that many flushes are
 * out wait for one to return. `flush` answers every item of its batch; should it throw instead, the
 * items it left unanswered get that error.
 */
export class TurnBatch<T, R> {
  private queue: Pending<T, R>[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly flush: (batch: Pending<T, R>[]) => Promise<void>,
    private readonly options: TurnBatchOptions<T>,
  ) {
    // A limit below one would hold every item for good.
    if (options.maxInFlight !== undefined && !(options.maxInFlight >= 1)) {
      throw new RangeError(`maxInFlight must be at least 1, not ${options.maxInFlight}`);
    }
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.atLimit()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.queue.length > 0 && !this.atLimit()) this.sendOne();
      this.schedule();
    });
  }

  private atLimit(): boolean {
    return this.inFlight >= (this.options.maxInFlight ?? Number.POSITIVE_INFINITY);
  }

  private sendOne(): void {
    this.inFlight++;
    void this.send(this.take()).finally(() => {
      this.inFlight--;
      // What came while the limit held waits for no other turn.
      while (this.options.maxInFlight !== undefined && this.queue.length > 0 && !this.atLimit()) {
        this.sendOne();
      }
    });
  }

  private take(): Pending<T, R>[] {
    const { maxItems, key } = this.options;
    if (!key) return this.queue.splice(0, maxItems);
    const keys = new Set<string>();
    const taken: Pending<T, R>[] = [];
    const left: Pending<T, R>[] = [];
    for (const p of this.queue) {
      const k = key(p.item);
      if (taken.length < maxItems && !keys.has(k)) {
        keys.add(k);
        taken.push(p);
      } else left.push(p);
    }
    this.queue = left;
    return taken;
  }

  private async send(batch: Pending<T, R>[]): Promise<void> {
    try {
      await this.flush(batch);
    } catch (err) {
      // A promise answered already ignores this.
      for (const p of batch) p.reject(err);
    }
  }
}
