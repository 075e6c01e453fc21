import { describe, expect, it } from "vitest";
import { median, parseVariants, type Reading, roundOrder, summarize } from "../src/ab/plan.js";

describe("parseVariants", () => {
  it("reads names, directories and each variant's environment", () => {
    expect(parseVariants("a=/tmp/before; b=/tmp/after:X=1,Y=a=b")).toEqual([
      { name: "a", dir: "/tmp/before", env: {} },
      { name: "b", dir: "/tmp/after", env: { X: "1", Y: "a=b" } },
    ]);
  });

  it("refuses nothing, a malformed variant, a repeated name and the floor's name", () => {
    expect(() => parseVariants(" ; ")).toThrow(/no variant/);
    expect(() => parseVariants("/tmp/x")).toThrow(/NAME=DIR/);
    expect(() => parseVariants("a=/tmp/x:NOVALUE")).toThrow(/ENV=VALUE/);
    expect(() => parseVariants("a=/x;a=/y")).toThrow(/must differ/);
    expect(() => parseVariants("floor=/x")).toThrow(/must differ/);
  });
});

describe("roundOrder", () => {
  it("turns the order around every other round, so that each run takes each place as often", () => {
    expect(roundOrder(["a", "b"], 0)).toEqual(["floor", "a", "b"]);
    expect(roundOrder(["a", "b"], 1)).toEqual(["b", "a", "floor"]);
    expect(roundOrder(["a", "b"], 2)).toEqual(["floor", "a", "b"]);
    const places = new Map<string, number[]>();
    for (let round = 0; round < 4; round++) {
      roundOrder(["a", "b"], round).forEach((name, place) => {
        places.set(name, [...(places.get(name) ?? []), place]);
      });
    }
    for (const name of ["floor", "a", "b"]) {
      expect(places.get(name)?.reduce((s, p) => s + p, 0)).toBe(4);
    }
  });
});

describe("summarize", () => {
  const reading = (
    round: number,
    name: string,
    opsPerSecond: number,
    cpuMsPerOp = 0.3,
    writesPerOp = 2,
  ): Reading => ({
    round,
    name,
    opsPerSecond,
    p99: 10,
    cpuMsPerOp,
    writesPerOp,
  });

  it("gives medians, ratios to each round's own floor, and the rounds a variant beat the first", () => {
    const readings = [
      reading(0, "floor", 8000, 0.2),
      reading(0, "a", 3000),
      reading(0, "b", 3200, 0.28, 1.5),
      reading(1, "floor", 6000, 0.2),
      reading(1, "a", 3000),
      reading(1, "b", 2900, 0.32, 1.7),
      reading(2, "floor", 7000, 0.2),
      reading(2, "a", 2800),
      reading(2, "b", 3500, 0.26, 1.4),
    ];
    const [floor, a, b] = summarize(readings, ["a", "b"]);
    expect(floor).toMatchObject({ name: "floor", rounds: 3, medianOps: 7000, medianRatio: 1 });
    expect(a).toMatchObject({ name: "a", medianOps: 3000, medianRatio: 0.4 });
    expect(a?.roundsAheadOfFirst).toBeUndefined();
    expect(b).toMatchObject({ name: "b", medianOps: 3200, medianCpuMsPerOp: 0.28, roundsAheadOfFirst: 2 });
    expect(b?.medianWritesPerOp).toBe(1.5);
    expect(b?.medianRatio).toBeCloseTo(0.4833, 3);
  });

  it("leaves a ratio out for a round without a floor reading", () => {
    const [, a] = summarize([reading(0, "a", 3000), reading(1, "floor", 6000), reading(1, "a", 1500)], ["a"]);
    expect(a).toMatchObject({ rounds: 2, medianRatio: 0.25 });
  });

  it("takes the middle of an even count as the mean of the two middle values", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
