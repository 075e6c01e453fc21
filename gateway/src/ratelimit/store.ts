/** Where fixed-window hit counts live. */
export interface CounterStore {
  /**
   * Adds one hit to `key` in window `windowId` and returns the count after adding it (1 for the first hit).
   * `key` already identifies the caller and endpoint; `windowId` is floor(epoch ms / 1000). A store in
   * memory answers at once (a number), a remote one later (a promise, which the limiter times out) or at
   * once from numbers it holds. `limit` is the key's limit: a store may use it to size what it reserves,
   * and may answer any number above it for a hit once the window's count has passed it.
   */
  increment(key: string, windowId: number, limit: number): number | Promise<number>;
}
