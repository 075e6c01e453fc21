/**
 * A push-to-pull bridge: producers `push` values (from socket callbacks), one consumer iterates them.
 * `end()` finishes the iteration after the queued values; `fail(err)` makes the next read throw.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly values: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | undefined;
  private rejectWaiting: ((err: unknown) => void) | undefined;
  private done = false;
  private error: unknown;

  push(value: T): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.rejectWaiting = undefined;
      resolve({ value, done: false });
    } else {
      this.values.push(value);
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.error = err;
    this.done = true;
    this.rejectWaiting?.(err);
    this.waiting = undefined;
  }

  get ended(): boolean {
    return this.done;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const value = this.values.shift();
        if (value !== undefined) return Promise.resolve({ value, done: false });
        if (this.error !== undefined) return Promise.reject(this.error);
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.rejectWaiting = reject;
        });
      },
      return: () => {
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
