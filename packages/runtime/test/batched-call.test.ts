import type { CallError } from "@avatar/contracts/common";
import { TokensService } from "@avatar/contracts/tokens";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { answerEach, batchedCall, MAX_BATCH_ITEMS } from "../src/batched-call.js";
import { callErrorOf } from "../src/call-errors.js";
import { notFound } from "../src/errors.js";
import { createLogger, silentLogger } from "../src/log.js";

/** A unary call in batches: one batch call per turn, each caller answered as a call of its own would be. */

/** What the peer answers for one item: its double, or a 404 for a negative number. */
function double(n: number): number {
  if (n < 0) throw notFound("No such number", { field: "n" });
  return n * 2;
}

const peerAnswers = async (items: number[]) =>
  items.map((n) => {
    try {
      return { value: double(n) };
    } catch (err) {
      return { error: callErrorOf(err, silentLogger, "/test") };
    }
  });

function recorded(
  many: (items: number[]) => Promise<{ value?: number; error?: ReturnType<typeof callErrorOf> }[]>,
) {
  const calls: string[] = [];
  const call = batchedCall({
    many: (items: number[]) => {
      calls.push(`many ${items.join(",")}`);
      return many(items);
    },
    valueOf: (o) => o.value,
    one: async (n: number) => {
      calls.push(`one ${n}`);
      return double(n);
    },
    maxItems: 10,
  });
  return { call, calls };
}

const rejection = (o: PromiseSettledResult<unknown>) =>
  o.status === "rejected" ? ConnectError.from(o.reason) : undefined;

describe("batchedCall", () => {
  it("answers each caller with its own outcome from one batch call", async () => {
    const { call, calls } = recorded(peerAnswers);
    const outcomes = await Promise.allSettled([call(1), call(-1), call(3)]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : rejection(o)?.code))).toEqual([
      2,
      Code.NotFound,
      6,
    ]);
    expect(rejection(outcomes[1] as PromiseSettledResult<unknown>)?.rawMessage).toBe("No such number");
    expect(calls).toEqual(["many 1,-1,3"]);
  });

  it("makes one call per item when the peer does not know the batch call", async () => {
    const { call, calls } = recorded(async () => {
      throw new ConnectError("unknown procedure", Code.Unimplemented);
    });
    const outcomes = await Promise.allSettled([call(1), call(-1)]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : rejection(o)?.code))).toEqual([
      2,
      Code.NotFound,
    ]);
    expect(calls).toEqual(["many 1,-1", "one 1", "one -1"]);
  });

  it("fails every item of a batch call that failed, and an item the answer holds nothing for", async () => {
    const down = recorded(async () => {
      throw new ConnectError("unavailable", Code.Unavailable);
    });
    const failed = await Promise.allSettled([down.call(1), down.call(2)]);
    expect(failed.map((o) => rejection(o)?.code)).toEqual([Code.Unavailable, Code.Unavailable]);
    const short = recorded(async (items) => [{ value: items[0] ?? 0 }, {}]);
    const outcomes = await Promise.allSettled([short.call(1), short.call(2), short.call(3)]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : rejection(o)?.code))).toEqual([
      1,
      Code.Internal,
      Code.Internal,
    ]);
  });
});

describe("answerEach", () => {
  const method = TokensService.method.mintSessionTokensBatch;

  it("answers each item in order, a failed one with its CallError, logged under its request id", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ sink: (l) => lines.push(JSON.parse(l)) });
    type Outcome = { value?: number; error?: CallError };
    const outcomes = await answerEach<number, number, Outcome>([1, -1, 3], {
      field: "n",
      method,
      log,
      run: async (n) => {
        if (n < 0) throw new Error("broken");
        return double(n);
      },
      ok: (value) => ({ value }),
      failed: (error) => ({ error }),
      requestId: (i) => `req-${i}`,
    });
    expect(outcomes.map((o) => o.value ?? o.error?.code)).toEqual([2, Code.Internal, 6]);
    expect(lines.map((l) => [l.request_id, l.procedure])).toEqual([
      ["req-1", "/avatar.tokens.v1.TokensService/MintSessionTokensBatch"],
    ]);
  });

  it("refuses more items than it takes, naming the field, and runs none of them", async () => {
    let ran = 0;
    const err = await answerEach(
      Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => 1),
      {
        field: "mints",
        method,
        log: silentLogger,
        run: async () => ran++,
        ok: () => ({}),
        failed: () => ({}),
      },
    ).catch((e: unknown) => ConnectError.from(e));
    expect([err instanceof ConnectError && err.code, ran]).toEqual([Code.InvalidArgument, 0]);
  });
});
