/**
 * `pnpm bench:ab`: two or more builds of the one-process suite, measured by turns against one Postgres
 * server with the floor in every round, for a change whose effect is smaller than this machine's noise
 * between runs (±15 % some hours). Copy `suite/dist` after `pnpm build` for each side into the suite's
 * folder, where its packages are found (ab/packages.ts), e.g.
 * `BENCH_AB_VARIANTS='before=suite/ab/before;after=suite/ab/after' pnpm bench:ab`; a variant may add settings:
 * `after=suite/ab/after:SESSIONS_CREATION_INSERTS_IN_FLIGHT=2`. Each round runs the floor and every variant
 * (a fresh process each), the order turned around every other round (ab/plan.ts); the summary gives the
 * medians, the ratio to each round's own floor, and in how many rounds each variant beat the first.
 *
 * The database is migrated by this checkout's code: a build older than a migration refuses it.
 * Settings (environment): BENCH_AB_VARIANTS, BENCH_AB_ROUNDS (default 4), BENCH_AB_SCENARIO (`mint` or
 * `lifecycle`, mint + start + stop; default mint), BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS,
 * BENCH_MINT (`LITE` or `FULL`, as `pnpm bench`; the lifecycle always LITE).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { env, readConfig } from "@avatar/runtime";
import { missingPackages } from "./ab/packages.js";
import { parseVariants, type Reading, roundOrder, summarize } from "./ab/plan.js";
import { dropOwnDatabase, startBenchEnvironment } from "./backend/environment.js";
import {
  apiKeyHeaders,
  type BenchSpace,
  floorMintBody,
  MINT_MODES,
  mintBody,
  prepareOwnDatabase,
} from "./backend/prepare.js";
import { startSuiteBackend } from "./backend/suite.js";
import { startFloor } from "./floor/start-floor.js";
import { measureLoad } from "./load/measure.js";
import type { Scenario } from "./load/scenario.js";
import { fixed, say } from "./print.js";

const settings = readConfig({
  BENCH_AB_VARIANTS: env.string(),
  BENCH_AB_ROUNDS: env.int({ default: 4, min: 1 }),
  BENCH_AB_SCENARIO: env.string({ default: "mint" }),
  BENCH_SECONDS: env.int({ default: 10, min: 1 }),
  BENCH_WARMUP_SECONDS: env.int({ default: 3, min: 0 }),
  BENCH_CONNECTIONS: env.int({ default: 20, min: 1 }),
  BENCH_MINT: env.oneOf(MINT_MODES, { default: "LITE" }),
});

const variants = parseVariants(settings.BENCH_AB_VARIANTS);
for (const v of variants) {
  if (!existsSync(path.join(v.dir, "main.js")))
    throw new Error(`${v.name}: no main.js in ${v.dir} (a copy of suite/dist)`);
  const missing = missingPackages(v.dir);
  if (missing.length > 0) {
    throw new Error(
      `${v.name}: ${v.dir} cannot find ${missing.join(", ")}: copy suite/dist into the checkout's suite ` +
        "folder (e.g. suite/ab/before), where the suite's packages are found",
    );
  }
}
if (settings.BENCH_AB_SCENARIO !== "mint" && settings.BENCH_AB_SCENARIO !== "lifecycle") {
  throw new Error(`BENCH_AB_SCENARIO must be mint or lifecycle, not ${settings.BENCH_AB_SCENARIO}`);
}
const kind: Scenario["kind"] = settings.BENCH_AB_SCENARIO === "mint" ? "single" : "lifecycle";

const environment = await startBenchEnvironment({ fromSource: false });
const floor = await startFloor("bench/src/floor/http-floor.ts", { DATABASE_URL: environment.pg.url });
const readings: Reading[] = [];
try {
  const floorBody = floorMintBody(settings.BENCH_MINT);
  const run = async (
    round: number,
    name: string,
    url: string,
    path: string,
    pids: () => number[],
    space?: BenchSpace,
  ) => {
    const scenario: Scenario = {
      url,
      kind: space ? kind : "single",
      path,
      body: space ? mintBody(space, kind === "single" ? settings.BENCH_MINT : "LITE") : floorBody,
      headers: space ? apiKeyHeaders(space) : [{}],
      connections: settings.BENCH_CONNECTIONS,
      seconds: settings.BENCH_SECONDS,
      warmupSeconds: settings.BENCH_WARMUP_SECONDS,
    };
    const {
      result,
      cpuMsPerOp: used,
      writesPerOp,
    } = await measureLoad(scenario, {
      measured: () => [...pids(), ...environment.pg.pids()],
      // Postgres's writes: its client backends' only (servers/postgres.ts clientPids).
      writers: () => [...pids(), ...environment.pg.clientPids()],
    });
    const cpuMsPerOp = used.measured ?? Number.NaN;
    const writes = writesPerOp.writers ?? Number.NaN;
    const refused = Object.entries(result.statuses)
      .map(([code, n]) => ` ${code} x${n}`)
      .join("");
    readings.push({
      round,
      name,
      opsPerSecond: result.opsPerSecond,
      p99: result.p99,
      cpuMsPerOp,
      writesPerOp: writes,
    });
    say(
      `round ${round} ${name.padEnd(10)} ${fixed(result.opsPerSecond).padStart(8)} ops/s  p99 ${fixed(result.p99)} ms  ${fixed(cpuMsPerOp, 3)} CPU ms/op  ${fixed(writes, 2)} writes/op${refused}`,
    );
  };

  say(
    `pnpm bench:ab, ${new Date().toISOString()}: ${settings.BENCH_AB_SCENARIO}, ${settings.BENCH_AB_ROUNDS} rounds of ` +
      `${settings.BENCH_SECONDS} s, ${variants.map((v) => `${v.name} = ${v.dir}${Object.keys(v.env).length ? ` with ${JSON.stringify(v.env)}` : ""}`).join("; ")}`,
  );
  const byName = new Map(variants.map((v) => [v.name, v]));
  for (let round = 0; round < settings.BENCH_AB_ROUNDS; round++) {
    for (const name of roundOrder([...byName.keys()], round)) {
      const v = byName.get(name);
      if (!v) {
        const floorPid = floor.process.child.pid;
        await run(round, name, floor.url, "/insert", () => (floorPid ? [floorPid] : []));
        continue;
      }
      // Each run on a database of its own: what the last one left started is not this one's work.
      const { own, space } = await prepareOwnDatabase(environment);
      const suite = await startSuiteBackend(own, { entry: path.join(v.dir, "main.js"), env: v.env });
      try {
        const pids = () => suite.processes().find((p) => p.name === "suite")?.pids ?? [];
        await run(round, name, suite.gatewayUrl, "/v1/sessions/token", pids, space);
        for (const text of suite.exited()) say(text);
      } finally {
        await suite.stop();
        await dropOwnDatabase(own);
      }
    }
  }
} finally {
  await floor.stop();
  await environment.stop();
}

say("");
say(
  `${"run".padEnd(12)}${"rounds".padEnd(8)}${"ops/s".padEnd(10)}${"of floor".padEnd(10)}${"CPU ms/op".padEnd(11)}${"writes/op".padEnd(11)}ahead of ${variants[0]?.name}`,
);
for (const s of summarize(
  readings,
  variants.map((v) => v.name),
)) {
  say(
    `${s.name.padEnd(12)}${String(s.rounds).padEnd(8)}${fixed(s.medianOps).padEnd(10)}${fixed(s.medianRatio, 3).padEnd(10)}` +
      `${fixed(s.medianCpuMsPerOp, 3).padEnd(11)}${fixed(s.medianWritesPerOp, 2).padEnd(11)}${s.roundsAheadOfFirst === undefined ? "" : `${s.roundsAheadOfFirst} of ${s.rounds}`}`,
  );
}
say("(medians over the rounds; 'of floor' divides each run by the floor of its own round)");
