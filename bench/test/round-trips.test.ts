import { describe, expect, it } from "vitest";
import { RoundTrips } from "../src/lite/round-trips.js";

/** Round trips on a clock of the test's, starting at `start`; `trip` sends a chunk at `at` answered `ms` later. */
function onClock(start: number) {
  let clock = start;
  const trips = new RoundTrips(() => clock);
  const trip = (id: string, at: number, ms: number) => {
    clock = at;
    trips.chunkSent(id);
    clock = at + ms;
    trips.acknowledged(id);
  };
  return { trips, trip };
}

describe("bench:lite's round trips", () => {
  it("count only while measuring, pool the windows between reset and reset, and take late acknowledgements", () => {
    const trips = new RoundTrips();
    trips.chunkSent("before");
    trips.acknowledged("before");
    expect(trips.summary()).toMatchObject({ sent: 0, acked: 0, lost: 0 });

    trips.resume();
    trips.chunkSent("1");
    trips.acknowledged("1");
    trips.chunkSent("2");
    trips.end();
    trips.chunkSent("between");
    trips.resume();
    trips.chunkSent("3");
    trips.end();
    // Sent while measuring, acknowledged after the window: it counts, and is not lost.
    trips.acknowledged("2");
    trips.acknowledged("between");
    const pooled = trips.summary();
    expect(pooled).toMatchObject({ sent: 3, acked: 2, lost: 1 });
    expect(pooled.p99).toBeGreaterThanOrEqual(pooled.p50);

    trips.reset();
    trips.acknowledged("3");
    expect(trips.summary()).toMatchObject({ sent: 0, acked: 0, lost: 0 });
    expect(trips.summary().p99).toBeNaN();
  });

  it("group the chunks over a bound into stalls: those on their way at overlapping or near times", () => {
    const { trips, trip } = onClock(0);
    trips.resume();
    // One stall: three chunks held together (sent at 100, 104 and 130 while the first still waited).
    trip("a", 100, 40);
    trip("b", 104, 36);
    trip("c", 130, 12);
    // Fast chunks between the stalls do not count.
    trip("d", 200, 1);
    trip("e", 300, 2);
    // A lone slow chunk, far from the others: a stall of its own.
    trip("f", 500, 9);
    expect(trips.stalls(5)).toEqual({
      overMs: 5,
      chunks: 4,
      share: 4 / 6,
      stalls: 2,
      largest: { chunks: 3, ms: 42 },
    });
    // Within the gap of the one before it, a chunk joins its stall.
    trip("g", 515, 8);
    expect(trips.stalls(5).stalls).toBe(2);
    expect(trips.stalls(5, 0).stalls).toBe(3);
    expect(trips.stalls(100)).toEqual({
      overMs: 100,
      chunks: 0,
      share: 0,
      stalls: 0,
      largest: { chunks: 0, ms: 0 },
    });
  });

  it("give the p99 of each second's chunks, by when they were sent, from the first window's start", () => {
    const { trips, trip } = onClock(5_000);
    expect(trips.p99BySecond()).toEqual([]);
    trips.resume();
    trip("a", 5_100, 3);
    trip("b", 5_900, 4);
    // Nothing sent in the second from 6,000; a stall in the one after, sent at its end, answered later.
    trip("c", 7_999, 1_500);
    trip("d", 7_100, 2);
    expect(trips.p99BySecond()).toEqual([4, Number.NaN, 1_500]);
    trips.reset();
    expect(trips.p99BySecond()).toEqual([]);
  });
});
