import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { asciiOnly, bundleOptions, loadedAtStart } from "../src/bundle.js";
import { PROCESSES } from "../src/processes.js";

const root = path.resolve(import.meta.dirname, "../../..");
const MEDIA_STACK = ["@napi-rs/canvas", "node-datachannel", "opusscript", "@livekit/rtc-node"];

async function metafileOf(entry: string) {
  const result = await build({
    ...bundleOptions(path.join(root, entry), path.join(root, ".data/bundle-test"), "main.js"),
    write: false,
    logLevel: "silent",
  });
  const metafile = result.metafile;
  // The entry's own output; the chunks of `import()` targets name an entry point too.
  const main = Object.keys(metafile.outputs).find((o) => o.endsWith("/main.js"));
  if (!main) throw new Error(`no entry output for ${entry}`);
  const everywhere = new Set(Object.values(metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)));
  return { atStart: loadedAtStart(metafile, main), everywhere, inputs: Object.keys(metafile.inputs) };
}

/** The files a module starts by URL beside itself (`new URL("./name.mjs", import.meta.url)`). */
const RELATIVE_URL = /new URL\("\.\/([\w.-]+\.mjs)", import\.meta\.url\)/g;

describe("the bundles", () => {
  it("a pipeline worker loads the media stack's native libraries with its first session, not at start", async () => {
    const { atStart, everywhere } = await metafileOf("services/pipeline/src/main.ts");
    for (const name of MEDIA_STACK) {
      expect(everywhere, `${name} is in the pipeline's bundle`).toContain(name);
      expect(atStart, `${name} is loaded at start`).not.toContain(name);
    }
  });

  it("every file a bundle starts by URL (a worker thread) is built or copied beside it", async () => {
    for (const p of PROCESSES) {
      const { inputs } = await metafileOf(`${p.dir}/src/main.ts`);
      const beside = new Set([
        ...(p.workers ?? []).map((w) => w.out),
        ...(p.assets ?? []).map((a) => path.basename(a)),
      ]);
      const started = inputs
        .filter((input) => !input.includes("node_modules") && /\.[cm]?[jt]s$/.test(input))
        .flatMap((input) => [...readFileSync(path.join(root, input), "utf8").matchAll(RELATIVE_URL)])
        .map((m) => m[1]);
      for (const name of started) expect(beside, `${p.dir} starts ${name}`).toContain(name);
    }
  }, 120_000);

  it("the one-process suite starts without them too", async () => {
    const { atStart } = await metafileOf("suite/src/main.ts");
    for (const name of MEDIA_STACK) expect(atStart, `${name} is loaded at start`).not.toContain(name);
  });
});

describe("asciiOnly", () => {
  it("escapes every character outside ASCII to one that means the same in code", () => {
    const source = [
      "// an em dash \u2014 in a comment",
      "const re = /^[l\u026b]/;",
      "const s = `caf\u00e9 ` + '\u{1F600}';",
      "return [re.test('\u026bx'), s, s.length];",
    ].join("\n");
    const ascii = asciiOnly(source);
    expect(ascii).toMatch(/^[\x20-\x7e\n]*$/);
    expect(new Function(ascii)()).toEqual(new Function(source)());
    expect(new Function(ascii)()).toEqual([true, "caf\u00e9 \u{1F600}", 7]);
  });

  it("leaves ASCII as it is", () => {
    const source = "const a = '\\u00e9'; // plain\n";
    expect(asciiOnly(source)).toBe(source);
  });
});
