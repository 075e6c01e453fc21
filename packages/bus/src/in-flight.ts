/** Tracks running handler calls so unsubscribe/close can wait for them to finish. */
export class InFlight {
  readonly #running = new Set<Promise<unknown>>();

  /** Calls `fn` (a synchronous throw becomes a rejection) and tracks it until it settles. */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const call = (async () => fn())();
    this.#running.add(call);
    const forget = () => this.#running.delete(call);
    call.then(forget, forget);
    return call;
  }

  get size(): number {
    return this.#running.size;
  }

  /** Resolves once nothing is running, including calls started while waiting. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
