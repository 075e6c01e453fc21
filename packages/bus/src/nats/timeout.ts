import { closedToBusError, isTimeout } from "./errors.js";

/** Rejects with `onTimeout()` if `work` has not settled within `ms`; a late result is ignored. */
export function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Runs JetStream work within `ms`. Timeouts, ours or the client's, become `timeoutError()`; a closed
 * connection becomes BusClosedError; other errors pass through.
 */
export async function bounded<T>(work: () => Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  try {
    return await withTimeout(work(), ms, timeoutError);
  } catch (err) {
    if (isTimeout(err)) throw timeoutError();
    throw closedToBusError(err);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
