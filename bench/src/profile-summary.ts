/**
 * `pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS]`: where a `node --cpu-prof` profile spent its
 * time (profile/summarize.ts): self time by function (the top N, default 25), by package, and by the
 * innermost frame of our own code (profile the sources, `BENCH_FROM_SOURCE=1`: a bundle holds its
 * libraries in our own files). LAST_SECONDS keeps only the profile's last seconds: the last measurement
 * of a `pnpm bench` run (e.g. its mint + start + stop) without the ones before it.
 */
import { readFileSync } from "node:fs";
import { type CpuProfile, summarizeProfile } from "./profile/summarize.js";

const usage = "usage: pnpm bench:profile FILE.cpuprofile [N] [LAST_SECONDS]";
const [file, topArg, lastArg] = process.argv.slice(2);
const positive = (arg: string | undefined) => arg === undefined || Number(arg) > 0;
if (!file || !positive(topArg) || !positive(lastArg)) throw new Error(usage);
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
const summary = summarizeProfile(profile, lastArg ? { lastSeconds: Number(lastArg) } : {});

const pct = (t: number) => `${((100 * t) / summary.total).toFixed(1).padStart(5)} %`;
const print = (title: string, rows: [string, number][], n: number) => {
  console.log(`\n${title}`);
  for (const [k, t] of rows.slice(0, n)) console.log(`${pct(t)}  ${k}`);
};
console.log(
  `${file}: ${(summary.total / 1e6).toFixed(1)} s sampled${lastArg ? ` (the last ${lastArg} s)` : ""}`,
);
print("self time by package", summary.byPackage, 20);
print("self time by function", summary.byFunction, top);
print("by the innermost frame of our own code (its time and what it called)", summary.byOwnFrame, top);
