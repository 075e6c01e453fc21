import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { EXTERNAL, OPTIONAL } from "./externals.js";

/** CommonJS packages compiled into an ES module still call require(). */
const REQUIRE_SHIM =
  'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);';

/**
 * How `entry` is bundled to `outdir/file`. What the code loads with `import()` goes to chunks beside it
 * (`<name>-<hash>.js`), read when first imported: a pipeline worker loads the media stack's native
 * libraries (Skia, libdatachannel, Opus, transportA's SDK: ~50 MiB resident) with its first session's
 * media, not at start. Chunks sit beside the entry so that `new URL("./x", import.meta.url)` means the
 * same folder in every one of them.
 */
export function bundleOptions(
  entry: string,
  outdir: string,
  file: string,
): BuildOptions & { metafile: true } {
  const extension = path.extname(file);
  const name = path.basename(file, extension);
  return {
    entryPoints: { [name]: entry },
    outdir,
    outExtension: { ".js": extension },
    splitting: true,
    chunkNames: `${name}-[hash]`,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...EXTERNAL, ...OPTIONAL],
    banner: { js: REQUIRE_SHIM },
    metafile: true,
    logLevel: "warning",
    legalComments: "none",
  };
}

/** Bundles `entry` (an absolute path) to `outdir/file` and its chunks, all in ASCII. */
export async function bundle(entry: string, outdir: string, file: string) {
  const result = await build(bundleOptions(entry, outdir, file));
  for (const output of Object.keys(result.metafile.outputs)) {
    const written = path.resolve(output);
    const source = readFileSync(written, "utf8");
    const ascii = asciiOnly(source);
    if (ascii !== source) writeFileSync(written, ascii);
  }
  return result;
}

/**
 * esbuild copies some characters outside ASCII as they are (in comments, in regular expressions); one
 * of them makes V8 hold the whole bundle's source as a two-byte string, 2.5 MiB more per process. Each
 * is written as its `\uXXXX` escape (UTF-16 code units), which means the same character in a string, a
 * template, a regular expression or an identifier; only `String.raw` and a RegExp's `source` would see
 * the difference.
 */
export function asciiOnly(source: string): string {
  return source.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The external packages an output loads as soon as it is loaded: its own `import` statements and
 * those of the chunks it imports statically, not what it reaches through `import()`.
 */
export function loadedAtStart(metafile: Metafile, output: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of metafile.outputs[file]?.imports ?? []) {
      if (i.kind !== "import-statement") continue;
      if (i.external) packages.add(i.path);
      else visit(i.path);
    }
  };
  visit(output);
  return packages;
}
