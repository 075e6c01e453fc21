import { describe, expect, it } from "vitest";
// The runtime cannot name @avatar/testkit (the testkit depends on the runtime), so it uses the file directly.
import { spawnEntry } from "../../testkit/src/processes.js";

describe("a service process that cannot start", () => {
  it("logs one error line naming the cause and exits 1 when Postgres is unreachable", async () => {
    const proc = spawnEntry("catalog", "services/catalog/src/main.ts", {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      PORT: "0",
    });
    const code = await new Promise<number | null>((resolve) => proc.child.once("exit", resolve));
    expect(code).toBe(1);
    const lines = proc
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    const error = lines.find((l) => l.level === "error");
    expect(error?.msg).toBe("could not start");
    expect(JSON.stringify(error)).toMatch(/ECONNREFUSED/);
    expect(proc.output()).not.toMatch(/^\s+at /m);
  }, 60_000);
});
