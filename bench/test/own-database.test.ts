import { describe, expect, it } from "vitest";
import { ownDatabaseName } from "../src/backend/environment.js";

describe("the database a benchmark drops", () => {
  it("is one withFreshDatabase made, named from its URL", () => {
    expect(ownDatabaseName("postgres://bench@127.0.0.1:5432/bench_3")).toBe("bench_3");
  });

  it("is refused when it is any other", () => {
    for (const url of [
      "postgres://bench@127.0.0.1:5432/postgres",
      "postgres://bench@127.0.0.1:5432/bench_",
      "postgres://bench@127.0.0.1:5432/bench_1;drop",
      "postgres://bench@127.0.0.1:5432/",
      "not a url",
      "",
    ]) {
      expect(() => ownDatabaseName(url), url).toThrow(/not a database of withFreshDatabase/);
    }
  });
});
