import { describe, expect, it } from "vitest";
import { adjacentFloors } from "../src/floor/adjacent-floors.js";

const runs = ["floor 1", "suite mint", "floor 2", "suite lifecycle", "processes mint", "floor 3"];
const isFloor = (run: string) => run.startsWith("floor");

describe("adjacentFloors", () => {
  it("gives the floor runs just before and just after a run, skipping other runs", () => {
    expect(adjacentFloors(runs, 1, isFloor)).toEqual(["floor 1", "floor 2"]);
    expect(adjacentFloors(runs, 3, isFloor)).toEqual(["floor 2", "floor 3"]);
    expect(adjacentFloors(runs, 4, isFloor)).toEqual(["floor 2", "floor 3"]);
  });

  it("gives the one there is at either end", () => {
    expect(adjacentFloors(["suite mint", "floor"], 0, isFloor)).toEqual(["floor"]);
    expect(adjacentFloors(["floor", "suite mint"], 1, isFloor)).toEqual(["floor"]);
    expect(adjacentFloors(["suite mint"], 0, isFloor)).toEqual([]);
  });
});
