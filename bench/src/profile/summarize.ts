/**
 * Where a `node --cpu-prof` profile spent its time: self time by function, by package (node_modules
 * package, workspace folder, or node), and by the innermost frame of our own code (the workspace
 * function that called into a library or node, or did the work itself). A window keeps one measurement of
 * a `pnpm bench` run without the others: `lastSeconds` (the profile's end), or `fromSeconds` and
 * `toSeconds` from its start, which `busyBySecond` helps find (a run ends with the processes at rest).
 */

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** Microseconds since the previous sample. */
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Microseconds sampled (within the window). */
  total: number;
  /** Microseconds by key, largest first. */
  byPackage: [string, number][];
  byFunction: [string, number][];
  byOwnFrame: [string, number][];
}

/** The package a script belongs to: an npm package, a workspace folder, or `node`. */
export function packageOf(url: string): string {
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
const nameOf = (f: ProfileNode["callFrame"]) =>
  `${f.functionName || "(anonymous)"} ${f.url.replace(/.*\/(node_modules|src)\//, "")}:${f.lineNumber + 1}`;

function add(map: Map<string, number>, key: string, t: number): void {
  map.set(key, (map.get(key) ?? 0) + t);
}

const largestFirst = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);

export interface ProfileWindow {
  /** The profile's last seconds. */
  lastSeconds?: number;
  /** Seconds from the profile's start. */
  fromSeconds?: number;
  toSeconds?: number;
}

/** A window as given on the command line: `LAST_SECONDS`, or `FROM-TO` seconds from the start; undefined when it is neither. */
export function parseWindow(arg: string | undefined): ProfileWindow | undefined {
  if (arg === undefined) return {};
  const range = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(arg);
  if (range) {
    const [fromSeconds, toSeconds] = [Number(range[1]), Number(range[2])];
    return fromSeconds < toSeconds ? { fromSeconds, toSeconds } : undefined;
  }
  const last = Number(arg);
  return arg.trim() !== "" && last > 0 ? { lastSeconds: last } : undefined;
}

/** Calls `visit` with each sample's node id, its delta and when the delta began (µs from the start). */
function eachSample(profile: CpuProfile, visit: (id: number, delta: number, at: number) => void): void {
  let at = 0;
  profile.samples.forEach((id, i) => {
    // A sample stands for the `delta` before it.
    const delta = profile.timeDeltas[i] ?? 0;
    visit(id, delta, at);
    at += delta;
  });
}

/** The share of each whole second of the profile (from its start) that was not idle, 0 to 1. */
export function busyBySecond(profile: CpuProfile): number[] {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const all: number[] = [];
  const busy: number[] = [];
  eachSample(profile, (id, delta, at) => {
    const s = Math.floor(at / 1e6);
    all[s] = (all[s] ?? 0) + delta;
    busy[s] = (busy[s] ?? 0) + (idle.has(id) ? 0 : delta);
  });
  return Array.from(all, (t, s) => (t ? (busy[s] ?? 0) / t : 0));
}

export function summarizeProfile(profile: CpuProfile, window: ProfileWindow = {}): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const span = profile.timeDeltas.reduce((a, b) => a + b, 0);
  const from = window.lastSeconds ? span - window.lastSeconds * 1e6 : (window.fromSeconds ?? 0) * 1e6;
  const to = window.toSeconds === undefined ? Number.POSITIVE_INFINITY : window.toSeconds * 1e6;

  const self = new Map<number, number>();
  eachSample(profile, (id, delta, at) => {
    if (at >= from && at < to) self.set(id, (self.get(id) ?? 0) + delta);
  });

  /** The innermost frame of our own code on a sample's stack, if any. */
  const ownFrame = (id: number): ProfileNode | undefined => {
    for (let n = byId.get(id); n; n = byId.get(parentOf.get(n.id) ?? -1)) if (ours(n.callFrame.url)) return n;
    return undefined;
  };

  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  const own = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const f = n.callFrame;
    add(fns, nameOf(f), t);
    add(pkgs, f.url ? packageOf(f.url) : f.functionName, t);
    const mine = ownFrame(id);
    if (mine) add(own, nameOf(mine.callFrame), t);
  }
  return {
    total: [...self.values()].reduce((a, b) => a + b, 0),
    byPackage: largestFirst(pkgs),
    byFunction: largestFirst(fns),
    byOwnFrame: largestFirst(own),
  };
}
