/**
 * `pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS | FROM-TO]`: where a `node --cpu-prof` profile
 * spent its time (profile/summarize.ts): self time by function (the top N, default 25), by package, and
 * by the innermost frame of our own code (profile the sources, `BENCH_FROM_SOURCE=1`: a bundle holds its
 * libraries in our own files). It first prints how busy each second of the profile was, which shows
 * where each measurement of a `pnpm bench` run lies; a window keeps one of them: LAST_SECONDS, the
 * profile's last seconds, or FROM-TO, seconds from its start (e.g. `56-68`).
 */
import { readFileSync } from "node:fs";
import { busyBySecond, type CpuProfile, parseWindow, summarizeProfile } from "./profile/summarize.js";

const usage = "usage: pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS | FROM-TO]";
const [file, topArg, windowArg] = process.argv.slice(2);
const window = parseWindow(windowArg);
if (!file || (topArg !== undefined && !(Number(topArg) > 0)) || !window) throw new Error(usage);
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
const summary = summarizeProfile(profile, window);

const pct = (t: number) => `${((100 * t) / summary.total).toFixed(1).padStart(5)} %`;
const print = (title: string, rows: [string, number][], n: number) => {
  console.log(`\n${title}`);
  for (const [k, t] of rows.slice(0, n)) console.log(`${pct(t)}  ${k}`);
};
console.log(
  "busy % by second:",
  busyBySecond(profile)
    .map((b, s) => `${s}:${Math.round(100 * b)}`)
    .join(" "),
);
const windowName = window.lastSeconds
  ? ` (the last ${windowArg} s)`
  : windowArg
    ? ` (seconds ${windowArg})`
    : "";
console.log(`${file}: ${(summary.total / 1e6).toFixed(1)} s sampled${windowName}`);
print("self time by package", summary.byPackage, 20);
print("self time by function", summary.byFunction, top);
print("by the innermost frame of our own code (its time and what it called)", summary.byOwnFrame, top);
