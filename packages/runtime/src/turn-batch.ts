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
}

/**
 * Items added in the same turn of the event loop are handed to `flush` together, at the end of that turn
 * (setImmediate): under load that is one round trip for several callers, alone an item waits for nothing
 * but the end of the current turn. `flush` answers every item of its batch; should it throw instead, the
 * items it left unanswered get that error.
 */
export class TurnBatch<T, R> {
  private queue: Pending<T, R>[] = [];
  private scheduled = false;

  constructor(
    private readonly flush: (batch: Pending<T, R>[]) => Promise<void>,
    private readonly options: TurnBatchOptions<T>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.send(this.take());
      this.schedule();
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
