import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const src = path.join(import.meta.dirname, "../src");

/** Whether importing `entry` in a fresh process loads the drawing library (@napi-rs/canvas, ~24 MiB). */
function loadsCanvas(entry: string): boolean {
  const script = `
    await import(${JSON.stringify(path.join(src, entry))});
    const { createRequire } = await import("node:module");
    const cache = createRequire(import.meta.url).cache;
    process.stdout.write(String(Object.keys(cache).some((k) => k.includes("@napi-rs"))));
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: path.join(src, ".."),
    encoding: "utf8",
  });
  return out.trim() === "true";
}

describe("@avatar/media/looks", () => {
  it("does not load the drawing library (the catalog idles without it), while the full entry does", () => {
    expect(loadsCanvas("looks.ts")).toBe(false);
    expect(loadsCanvas("index.ts")).toBe(true);
  }, 60_000);
});
