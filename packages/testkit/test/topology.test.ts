import { describe, expect, it } from "vitest";
import { spawnTopology } from "../src/topology.js";

describe("spawnTopology", () => {
  it("rejects with the output of a process that exits before it is ready", async () => {
    let error: Error | undefined;
    try {
      await spawnTopology(
        [
          { name: "catalog", entry: "services/catalog/src/main.ts", service: true },
          { name: "broken", entry: "services/catalog/src/main.ts", env: { PORT: "not-a-port" } },
        ],
        { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
        30_000,
      );
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).toMatch(/exited early/);
    expect(error?.message).toMatch(/PORT/);
  }, 60_000);
});
