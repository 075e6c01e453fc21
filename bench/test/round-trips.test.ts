import { describe, expect, it } from "vitest";
import { RoundTrips } from "../src/lite/round-trips.js";

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
});
