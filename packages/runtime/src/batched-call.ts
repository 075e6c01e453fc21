import type { CallError } from "@avatar/contracts/common";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectErrorOf } from "./call-errors.js";
import { TurnBatch } from "./turn-batch.js";

/** One item's outcome in a batch call's answer: its error, when it failed. */
export interface BatchOutcome {
  error?: CallError | undefined;
}

export interface BatchedCallOptions<T, R, O extends BatchOutcome> {
  /** The batch call: one outcome per item, in their order. */
  many(items: T[]): Promise<O[]>;
  /** What the caller of a successful item gets; undefined when the outcome holds nothing. */
  valueOf(outcome: O): R | undefined;
  /** The call of one item, for a peer that does not know the batch call (Unimplemented). */
  one(item: T): Promise<R>;
  /** Most items per batch call. */
  maxItems: number;
}

/**
 * A unary call made in batches: the calls of one turn of the event loop go in one batch call (TurnBatch).
 * Each caller gets its own outcome: the value, or the ConnectError its CallError stands for, as a call
 * of its own would have failed. A failed batch call fails all its items; a peer that does not know it
 * (a rolling deploy) gets one call per item instead.
 */
export function batchedCall<T, R, O extends BatchOutcome>(options: BatchedCallOptions<T, R, O>) {
  const batch = new TurnBatch<T, R>(
    async (waiting) => {
      let outcomes: O[];
      try {
        outcomes = await options.many(waiting.map((w) => w.item));
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Unimplemented) throw err;
        await Promise.all(waiting.map((w) => options.one(w.item).then(w.resolve, w.reject)));
        return;
      }
      waiting.forEach((w, i) => {
        const outcome = outcomes[i];
        const value = outcome && !outcome.error ? options.valueOf(outcome) : undefined;
        if (outcome?.error) w.reject(connectErrorOf(outcome.error));
        else if (value === undefined)
          w.reject(new ConnectError("the batch answered nothing for this item", Code.Internal));
        else w.resolve(value);
      });
    },
    { maxItems: options.maxItems },
  );
  return (item: T): Promise<R> => batch.add(item);
}
