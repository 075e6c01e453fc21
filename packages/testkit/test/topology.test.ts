import { describe, expect, it } from "vitest";
import { spawnTopology } from "../src/topology.js";

describe("spawnTopology", () => {
  it("rejects with the output of a process that exits before it is ready", async () => {
    const refused = spawnTopology(
      [{ name: "catalog", entry: "services/catalog/src/main.ts", env: { PORT: "not-a-port" } }],
      { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
      { readyTimeoutMs: 30_000 },
    );
    await expect(refused).rejects.toThrow(/catalog exited early:[\s\S]*PORT/);
  }, 60_000);
});
