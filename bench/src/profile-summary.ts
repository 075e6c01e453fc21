/**
 * `pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS]`: where a `node --cpu-prof` profile spent its
 * time: self time by function (the top N, default 25), by package (node_modules package, workspace
 * folder, or node), and by the innermost frame of our own code (the workspace function that called into
 * a library or node, or did the work itself; profile the sources, `BENCH_FROM_SOURCE=1`: a bundle
 * holds its libraries in our own files). LAST_SECONDS keeps only the profile's last seconds: the last
 * measurement of a `pnpm bench` run (e.g. its mint + start + stop) without the ones before it.
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const usage = "usage: pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS]";
const [file, topArg, lastArg] = process.argv.slice(2);
const positive = (arg: string | undefined) => arg === undefined || Number(arg) > 0;
if (!file || !positive(topArg) || !positive(lastArg)) throw new Error(usage);
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const span = profile.timeDeltas.reduce((a, b) => a + b, 0);
const from = lastArg ? span - Number(lastArg) * 1e6 : 0;
const self = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= from) self.set(id, (self.get(id) ?? 0) + delta);
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

function packageOf(url: string): string {
  if (!url) return "(native / GC / idle)";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return "node";
  const m = /\/(packages|services)\/([^/]+)\//.exec(url) ?? /\/(gateway|suite|bench)\//.exec(url);
  return m ? (m[2] ? `${m[1]}/${m[2]}` : (m[1] ?? url)) : url;
}

const ours = (url: string) => url.startsWith("file://") && !url.includes("/node_modules/");
const nameOf = (f: Node["callFrame"]) =>
  `${f.functionName || "(anonymous)"} ${f.url.replace(/.*\/(node_modules|src)\//, "")}:${f.lineNumber + 1}`;

/** The innermost frame of our own code on a sample's stack, if any. */
function ownFrame(id: number): Node | undefined {
  for (let n = byId.get(id); n; n = byId.get(parentOf.get(n.id) ?? -1)) if (ours(n.callFrame.url)) return n;
  return undefined;
}

const fns = new Map<string, number>();
const pkgs = new Map<string, number>();
const own = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id);
  if (!n) continue;
  const f = n.callFrame;
  const key = nameOf(f);
  fns.set(key, (fns.get(key) ?? 0) + t);
  const pkg = f.url ? packageOf(f.url) : f.functionName;
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + t);
  const mine = ownFrame(id);
  if (mine) {
    const name = nameOf(mine.callFrame);
    own.set(name, (own.get(name) ?? 0) + t);
  }
}
const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
const largest = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled${lastArg ? ` (the last ${lastArg} s)` : ""}`);
console.log("\nself time by package");
for (const [k, t] of largest(pkgs, 20)) console.log(`${pct(t)}  ${k}`);
console.log("\nself time by function");
for (const [k, t] of largest(fns, top)) console.log(`${pct(t)}  ${k}`);
console.log("\nby the innermost frame of our own code (its time and what it called)");
for (const [k, t] of largest(own, top)) console.log(`${pct(t)}  ${k}`);
