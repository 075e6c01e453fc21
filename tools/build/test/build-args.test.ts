import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");

describe("pnpm build's folders", () => {
  it("refuses a folder that holds no process, names the ones that do, and builds nothing", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "tools/build/src/main.ts", "suite", "nowhere"],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/no process to build in nowhere \(.*services\/tokens.*suite.*\)/);
    expect(run.stdout).not.toMatch(/built /);
  });
});
