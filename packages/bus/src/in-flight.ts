/** Tracks running handler calls so unsubscribe/close can wait for them to finish. */
export class InFlight {
  readonly #running = new Set<Promise<unknown>>();

  /** Calls `fn` (a synchronous throw becomes a rejection) and tracks it until it settles. */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const call = (async () => fn())();
    this.#track(call);
    return call;
  }

  /**
   * Calls `fn` for a message nobody awaits: a failure, thrown or rejected, goes to `failed`. A handler
   * that finishes synchronously costs no promise (a realtime frame's handler mostly does); one that
   * returns a promise is tracked until it settles.
   */
  call(fn: () => void | Promise<void>, failed: (err: unknown) => void): void {
    let result: void | Promise<void>;
    try {
      result = fn();
    } catch (err) {
      failed(err);
      return;
    }
    if (isPromise(result)) this.#track(result.catch(failed));
  }

  get size(): number {
    return this.#running.size;
  }

  /** Resolves once nothing is running, including calls started while waiting. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  #track(call: Promise<unknown>): void {
    this.#running.add(call);
    const forget = () => this.#running.delete(call);
    call.then(forget, forget);
  }
}

/** Whether a handler's result is a promise to wait for (rather than its value). */
export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}

/** `fn(value)` now when `result` is a value, once it resolves when it is a promise. */
export function andThen<T, R>(result: T | Promise<T>, fn: (value: T) => R): R | Promise<R> {
  return isPromise(result) ? result.then(fn) : fn(result);
}
