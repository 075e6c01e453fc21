import type { CounterStore } from "./store.js";

/**
 * Counts for one process. Only the newest window and the one before it are kept: when a newer window
 * arrives, older windows are dropped, so memory is bounded by the keys seen in about one second.
 */
export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<number, Map<string, number>>();
  #newestWindowId = Number.NEGATIVE_INFINITY;

  increment(key: string, windowId: number): number {
    if (windowId > this.#newestWindowId) {
      this.#newestWindowId = windowId;
      for (const id of this.#windows.keys()) {
        if (id < windowId - 1) this.#windows.delete(id);
      }
    }
    let counts = this.#windows.get(windowId);
    if (!counts) {
      counts = new Map();
      this.#windows.set(windowId, counts);
    }
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    return count;
  }

  /** Number of windows currently held (for tests and metrics). */
  get windowCount(): number {
    return this.#windows.size;
  }
}
