import type { CallError } from "@avatar/contracts/common";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { callErrorOf, connectErrorOf } from "./call-errors.js";
import { invalidRequest } from "./errors.js";
import type { Logger } from "./log.js";
import { TurnBatch } from "./turn-batch.js";

/** Most items a batch call's handler takes (more is refused whole). */
export const MAX_BATCH_ITEMS = 256;
/** Most items a caller puts in one batch call. */
const ITEMS_PER_CALL = 64;

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
  /** Most items per batch call (64 unless told). */
  maxItems?: number;
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
    { maxItems: options.maxItems ?? ITEMS_PER_CALL },
  );
  return (item: T): Promise<R> => batch.add(item);
}

/**
 * The handler's side of a batch call: refuses more than MAX_BATCH_ITEMS (naming `field`), runs every item
 * at once (so that what they share, a batched insert or call, takes them together) and answers one
 * outcome per item, in order: `ok` with its value, or `failed` with its CallError (logged and masked as
 * serviceError does for a call of its own).
 */
export async function answerEach<T, R, O>(
  items: readonly T[],
  options: {
    field: string;
    method: DescMethod;
    log: Logger;
    run(item: T, index: number): Promise<R>;
    ok(value: R, item: T): O;
    failed(error: CallError, item: T): O;
    /** The request id of item `index`, for the log lines of its failure (asked only when it failed). */
    requestId?(index: number): string | undefined;
  },
): Promise<O[]> {
  if (items.length > MAX_BATCH_ITEMS) {
    throw invalidRequest(`at most ${MAX_BATCH_ITEMS} items per call`, { field: options.field });
  }
  const procedure = `/${options.method.parent.typeName}/${options.method.name}`;
  return Promise.all(
    items.map((item, i) =>
      options.run(item, i).then(
        (value) => options.ok(value, item),
        (err: unknown) =>
          options.failed(callErrorOf(err, options.log, procedure, options.requestId?.(i)), item),
      ),
    ),
  );
}
