import { describe, expect, it } from "vitest";
import { recovery } from "../src/lite/recovery.js";

describe("bench:lite's recovery after a pause", () => {
  it("is the first second from which every later one keeps to twice the median second before the pause", () => {
    const bySecond = [40, 60, 50, 3_000, 900, 90, 130, 80, Number.NaN, 70];
    // Median before the pause (seconds 0-2) 50: the limit 100, over the bound of 30.
    expect(recovery(bySecond, 3, 30)).toEqual({ limitMs: 100, fromSecond: 7 });
    // A bound above twice the median is the limit.
    expect(recovery(bySecond, 3, 200)).toEqual({ limitMs: 200, fromSecond: 5 });
  });

  it("is undefined when the last second is still over the limit, and never before the pause", () => {
    expect(recovery([10, 10, 500, 400], 2, 5)).toEqual({ limitMs: 20, fromSecond: undefined });
    // A pause that cost nothing: back from the second it started.
    expect(recovery([10, 10, 10, 10], 2, 5)).toEqual({ limitMs: 20, fromSecond: 2 });
  });
});
