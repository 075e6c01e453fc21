import { describe, expect, it } from "vitest";
import { type Pending, TurnBatch, type TurnBatchOptions } from "../src/turn-batch.js";
import { nextTurn } from "./support.js";

/** Items added in one turn of the event loop reach `flush` together; each caller gets its own answer. */

/** A batch whose flush doubles each item and records the batches it was given. */
function doubling(options: { maxItems: number; key?: (n: number) => string }) {
  const batches: number[][] = [];
  const batch = new TurnBatch<number, number>(async (waiting: Pending<number, number>[]) => {
    batches.push(waiting.map((w) => w.item));
    for (const w of waiting) w.resolve(w.item * 2);
  }, options);
  return { batch, batches };
}

/** A batch whose first flush throws and whose later ones answer each item with itself. */
function failingFirst(options: TurnBatchOptions<number>) {
  let calls = 0;
  return new TurnBatch<number, number>(async (waiting) => {
    if (calls++ === 0) throw new Error("first fails");
    for (const w of waiting) w.resolve(w.item);
  }, options);
}

describe("TurnBatch", () => {
  it("hands the items of one turn to one flush and the next turn's to another", async () => {
    const { batch, batches } = doubling({ maxItems: 10 });
    const first = [1, 2, 3].map((n) => batch.add(n));
    await nextTurn();
    const second = [4, 5].map((n) => batch.add(n));
    expect(await Promise.all([...first, ...second])).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it("takes at most maxItems per flush, in the order they came", async () => {
    const { batch, batches } = doubling({ maxItems: 2 });
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => batch.add(n)))).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("never puts two items of one key in one flush: the later waits for the next", async () => {
    const { batch, batches } = doubling({ maxItems: 10, key: (n) => String(n % 2) });
    await Promise.all([1, 3, 2, 5, 4].map((n) => batch.add(n)));
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails the items a throwing flush left unanswered with its error, and keeps the answers it gave", async () => {
    const failure = new Error("the call failed");
    const batch = new TurnBatch<number, number>(
      async (waiting) => {
        waiting[0]?.resolve(1);
        throw failure;
      },
      { maxItems: 10 },
    );
    const outcomes = await Promise.allSettled([batch.add(1), batch.add(2), batch.add(3)]);
    expect(outcomes).toEqual([
      { status: "fulfilled", value: 1 },
      { status: "rejected", reason: failure },
      { status: "rejected", reason: failure },
    ]);
  });

  it("keeps serving after a failed flush", async () => {
    const batch = failingFirst({ maxItems: 10 });
    await expect(batch.add(1)).rejects.toThrow("first fails");
    expect(await batch.add(2)).toBe(2);
  });

  describe("with maxInFlight", () => {
    /** A batch whose flushes wait until released, recording each batch and the most out at once. */
    function held(maxInFlight: number) {
      const batches: number[][] = [];
      const releases: (() => void)[] = [];
      let out = 0;
      let mostOut = 0;
      const batch = new TurnBatch<number, number>(
        async (waiting) => {
          batches.push(waiting.map((w) => w.item));
          mostOut = Math.max(mostOut, ++out);
          await new Promise<void>((release) => releases.push(release));
          out--;
          for (const w of waiting) w.resolve(w.item * 2);
        },
        { maxItems: 10, maxInFlight },
      );
      return { batch, batches, releases, mostOut: () => mostOut };
    }

    it("holds what comes while a flush is out, over several turns, and sends it together when it returns", async () => {
      const { batch, batches, releases } = held(1);
      const first = batch.add(1);
      await nextTurn();
      const later = [batch.add(2)];
      await nextTurn();
      later.push(batch.add(3), batch.add(4));
      await nextTurn();
      expect(batches).toEqual([[1]]);
      releases.shift()?.();
      expect(await first).toBe(2);
      await nextTurn();
      expect(batches).toEqual([[1], [2, 3, 4]]);
      releases.shift()?.();
      expect(await Promise.all(later)).toEqual([4, 6, 8]);
    });

    it("never has more flushes out than it may, and sends alone an item that finds a place free", async () => {
      const { batch, batches, releases, mostOut } = held(2);
      const answers = [batch.add(1)];
      await nextTurn();
      answers.push(batch.add(2));
      await nextTurn();
      answers.push(batch.add(3));
      await nextTurn();
      expect(batches).toEqual([[1], [2]]);
      releases.shift()?.();
      await answers[0];
      await nextTurn();
      expect(batches).toEqual([[1], [2], [3]]);
      while (releases.length > 0) {
        releases.shift()?.();
        await nextTurn();
      }
      expect(await Promise.all(answers)).toEqual([2, 4, 6]);
      expect(mostOut()).toBe(2);
    });

    it("refuses a limit that would hold every item for good", () => {
      for (const maxInFlight of [0, -1, Number.NaN]) {
        expect(() => new TurnBatch(async () => {}, { maxItems: 10, maxInFlight })).toThrow(RangeError);
      }
    });

    it("frees the place of a flush that threw", async () => {
      const batch = failingFirst({ maxItems: 10, maxInFlight: 1 });
      const first = batch.add(1).catch((err: Error) => err.message);
      await nextTurn();
      const second = batch.add(2);
      expect(await first).toBe("first fails");
      expect(await second).toBe(2);
    });
  });
});
