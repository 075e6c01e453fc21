/**
 * `pnpm build`: one JavaScript bundle per process (services, gateway, the one-process suite, avatarctl)
 * at `<package>/dist/main.js`, run as `node <package>/dist/main.js`. The workspace's packages and npm
 * packages are compiled in, except those that load files by path or native code (EXTERNAL): they stay
 * imports, resolved from the package's node_modules, so a bundle runs with production dependencies only
 * (`pnpm install --prod`). The build fails when a bundle imports one that its package.json does not list
 * under `dependencies`. One entry file per process, the chunks of what it imports only when needed, and
 * the files of the worker threads it starts by URL, side by side: no TypeScript at run time. Folders as
 * arguments build only those processes (`pnpm build suite`, what `pnpm start` runs).
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import type { Metafile } from "esbuild";
import { bundle } from "./bundle.js";
import { OPTIONAL } from "./externals.js";
import { PROCESSES, type ProcessBuild } from "./processes.js";

const root = path.resolve(import.meta.dirname, "../../..");

const builtins = new Set(builtinModules);

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`; undefined for Node's own modules. */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith("node:") || builtins.has(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

function undeclaredImports(p: ProcessBuild, metafile: Metafile): string[] {
  const manifest = JSON.parse(readFileSync(path.join(root, p.dir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const declared = new Set(Object.keys(manifest.dependencies ?? {}));
  const imported = new Set(p.assetImports ?? []);
  for (const output of Object.values(metafile.outputs)) {
    for (const i of output.imports) {
      const name = i.external ? packageName(i.path) : undefined;
      if (name && !OPTIONAL.includes(name)) imported.add(name);
    }
  }
  return [...imported].filter((name) => !declared.has(name)).sort();
}

async function buildProcess(p: ProcessBuild): Promise<string[]> {
  const outdir = path.join(root, p.dir, "dist");
  rmSync(outdir, { recursive: true, force: true });
  const results = [await bundle(path.join(root, p.dir, "src/main.ts"), outdir, "main.js")];
  // Worker threads the process starts by URL beside its bundle.
  for (const worker of p.workers ?? [])
    results.push(await bundle(path.join(root, worker.entry), outdir, worker.out));
  mkdirSync(outdir, { recursive: true });
  for (const asset of p.assets ?? [])
    copyFileSync(path.join(root, asset), path.join(outdir, path.basename(asset)));
  return [...new Set(results.flatMap((r) => undeclaredImports(p, r.metafile)))].sort();
}

// `pnpm build suite gateway` builds only those processes (by their folder); `pnpm build`, all of them.
const asked = process.argv.slice(2);
const unknown = asked.filter((dir) => !PROCESSES.some((p) => p.dir === dir));
if (unknown.length > 0) {
  process.stderr.write(
    `no process to build in ${unknown.join(", ")} (${PROCESSES.map((p) => p.dir).join(", ")})\n`,
  );
  process.exit(2);
}
const chosen = asked.length > 0 ? PROCESSES.filter((p) => asked.includes(p.dir)) : PROCESSES;

const problems: string[] = [];
const t0 = performance.now();
for (const p of chosen) {
  const missing = await buildProcess(p);
  if (missing.length > 0) {
    problems.push(`${p.dir}/package.json must list under "dependencies": ${missing.join(", ")}`);
  }
  process.stdout.write(`built ${p.dir}/dist/main.js\n`);
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`${chosen.length} bundles in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
