import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_FLAGS, nodeFlagsFor } from "../src/node-flags.js";

describe("nodeFlagsFor", () => {
  it("gives the pipeline a larger old space in place of the common one, and a larger young generation", () => {
    for (const main of [
      "services/pipeline/dist/main.js",
      "services/pipeline/src/main.ts",
      "/app/services/pipeline/dist/main.js",
    ]) {
      expect(nodeFlagsFor(main)).toEqual(["--initial-old-space-size=512", "--max-semi-space-size=32"]);
    }
  });

  it("gives the gateway the larger old space alone", () => {
    for (const main of ["gateway/dist/main.js", "gateway/src/main.ts", "/app/gateway/dist/main.js"]) {
      expect(nodeFlagsFor(main)).toEqual(["--initial-old-space-size=512"]);
    }
  });

  it("gives every other process the common flags only", () => {
    expect(NODE_FLAGS).toEqual(["--initial-old-space-size=128"]);
    for (const main of [
      "services/tokens/dist/main.js",
      "services/gateway-like/dist/main.js",
      "suite/src/main.ts",
      "tools/avatarctl/dist/main.js",
    ]) {
      expect(nodeFlagsFor(main)).toEqual(NODE_FLAGS);
    }
  });

  it("is what `pnpm start` runs the one-process suite's bundle with, built first (package.json cannot import it)", () => {
    const root = path.resolve(import.meta.dirname, "../../..");
    const { scripts } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const main = "suite/dist/main.js";
    expect(scripts.start).toBe(`pnpm -s build suite && ${["node", ...nodeFlagsFor(main), main].join(" ")}`);
  });
});
