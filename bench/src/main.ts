/**
 * `pnpm bench`: token minting through the public gateway next to its floor, a bare node:http server doing
 * one Postgres insert per request, on the same Postgres 15 server, in the same run: a floor run before
 * the first measurement and after each, every ratio taken against the floor runs on either side of its
 * measurement (floor/adjacent-floors.ts). The load comes from a separate process (autocannon). Prints the
 * ratios of issue 11, and each process's start-up and idle memory.
 *
 * "CPU ms/op" is the CPU time the measured side (its Node processes and the Postgres server) spent per
 * operation during the measured window, Postgres's share in parentheses: less sensitive to a shared, noisy machine than throughput.
 * "write calls/op" counts their write system calls per operation (proc.ts writeCalls), Postgres's those
 * of its client backends (an answer per statement, the WAL of a commit): every answer, statement and bus
 * message a process sends is one, and on this VM each costs its writer far more than most of the work
 * around it; a count does not drift with the host's speed as times do.
 * "page faults/op" counts the memory each process touched anew per operation (proc.ts pageFaults; for
 * Postgres all of its processes): a process that grows or churns memory under load pays for each.
 *
 * Needs Debian's postgresql-15 (/usr/lib/postgresql/15/bin, or POSTGRES_BIN) and nats-server on the PATH.
 * Settings (environment): BENCH_SECONDS (per measurement, default 10), BENCH_WARMUP_SECONDS (default 3),
 * BENCH_CONNECTIONS (default 20), BENCH_TOPOLOGIES (suite,processes), BENCH_FROM_SOURCE (run the
 * TypeScript sources instead of the bundles of `pnpm build`), BENCH_CPU_PROFILE_DIR (write a
 * `node --cpu-prof` profile of every backend process there), BENCH_PG_STATEMENTS (N: print the N
 * statements that took Postgres longest in each measurement, with their runs per operation and time),
 * BENCH_API_KEYS and BENCH_SPACES (default 1 and 1: the load's API keys, taken in turn, and the spaces
 * they belong to; e.g. 300 and 300 for many customers at once instead of one busy key), BENCH_AVATAR
 * (own, the default: an avatar of the benchmark's space, as customers mint with; or public, a catalog
 * avatar, which many spaces need), BENCH_MINT (LITE, the default, or FULL: a FULL session with the
 * avatar's default voice and a context; the lifecycle stays LITE).
 */
import { cpus, loadavg } from "node:os";
import { env, readConfig } from "@avatar/runtime";
import { AT_REST_MS } from "./at-rest.js";
import type { Backend } from "./backend/backend.js";
import { dropOwnDatabase, startBenchEnvironment } from "./backend/environment.js";
import {
  apiKeyHeaders,
  type BenchSpace,
  checkKeySpread,
  floorMintBody,
  MINT_MODES,
  mintBody,
  prepareOwnDatabase,
} from "./backend/prepare.js";
import { startProcessBackend } from "./backend/processes.js";
import { startSuiteBackend } from "./backend/suite.js";
import { adjacentFloors } from "./floor/adjacent-floors.js";
import { startFloor } from "./floor/start-floor.js";
import { measureLoad } from "./load/measure.js";
import type { LoadResult, Scenario } from "./load/scenario.js";
import { fixed, say } from "./print.js";
import { cpuSeconds, growthReading, mib, rssBytes, sumOver, wakeups } from "./proc.js";

/** The measurement group of Postgres's client backends. */
const POSTGRES_CLIENTS = "postgres clients";

const settings = readConfig({
  BENCH_SECONDS: env.int({ default: 10, min: 1 }),
  BENCH_WARMUP_SECONDS: env.int({ default: 3, min: 0 }),
  BENCH_CONNECTIONS: env.int({ default: 20, min: 1 }),
  BENCH_TOPOLOGIES: env.string({ default: "suite,processes" }),
  BENCH_FROM_SOURCE: env.bool({ default: false }),
  BENCH_CPU_PROFILE_DIR: env.optionalString(),
  BENCH_PG_STATEMENTS: env.int({ default: 0, min: 0, max: 100 }),
  BENCH_API_KEYS: env.int({ default: 1, min: 1, max: 10_000 }),
  BENCH_SPACES: env.int({ default: 1, min: 1, max: 10_000 }),
  BENCH_AVATAR: env.oneOf(["own", "public"], { default: "own" }),
  BENCH_MINT: env.oneOf(MINT_MODES, { default: "LITE" }),
});
const mintMode = settings.BENCH_MINT;
/** The mint's measurement, by the mode it mints (the lifecycle's always LITE). */
const mintRun = `mint (${mintMode})`;
const keySpread = {
  apiKeys: settings.BENCH_API_KEYS,
  spaces: settings.BENCH_SPACES,
  avatar: settings.BENCH_AVATAR,
};
// Before Postgres, NATS and the floor start: a spread no benchmark can run fails at once.
checkKeySpread(keySpread);
const topologies = new Set(settings.BENCH_TOPOLOGIES.split(",").map((t) => t.trim()));

interface Row {
  name: string;
  result: LoadResult;
  /** CPU milliseconds the measured processes (server and Postgres) spent per operation. */
  cpuMsPerOp: number;
  /** Of which Postgres. */
  postgresMsPerOp: number;
  /** Write system calls of the measured processes (server and Postgres) per operation (proc.ts writeCalls). */
  writesPerOp: number;
}
const rows: Row[] = [];

say(
  `pnpm bench, ${new Date().toISOString()}: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
const environment = await startBenchEnvironment({
  fromSource: settings.BENCH_FROM_SOURCE,
  cpuProfileDir: settings.BENCH_CPU_PROFILE_DIR,
  statements: settings.BENCH_PG_STATEMENTS > 0,
});
say(`${environment.pg.version} (${environment.pg.settings}); ${environment.natsVersion}`);
say(
  `processes run ${environment.fromSource ? "the TypeScript sources (tsx)" : "the bundles of pnpm build"}; ` +
    `load: autocannon in its own process, ${settings.BENCH_CONNECTIONS} connections, ` +
    `${settings.BENCH_SECONDS} s after ${settings.BENCH_WARMUP_SECONDS} s of warm-up, ` +
    `${keySpread.apiKeys} API key${keySpread.apiKeys === 1 ? "" : "s"} in ${keySpread.spaces} space${keySpread.spaces === 1 ? "" : "s"}, ` +
    `the ${keySpread.avatar === "own" ? "space's own avatar" : "public avatar"}, ${mintMode} mints`,
);

const floor = await startFloor("bench/src/floor/http-floor.ts", { DATABASE_URL: environment.pg.url });
try {
  const floorUrl = floor.url;
  const floorBody = floorMintBody(mintMode);
  const scenario = (
    url: string,
    kind: Scenario["kind"],
    path: string,
    body: string,
    space?: BenchSpace,
  ): Scenario => ({
    url,
    kind,
    path,
    body,
    headers: space ? apiKeyHeaders(space) : [{}],
    connections: settings.BENCH_CONNECTIONS,
    seconds: settings.BENCH_SECONDS,
    warmupSeconds: settings.BENCH_WARMUP_SECONDS,
  });
  const measure = async (name: string, s: Scenario, pids: () => number[], backend?: Backend) => {
    const names = (backend?.processes() ?? []).map((g) => g.name);
    const byProcess = Object.fromEntries(
      names.map((n) => [n, () => backend?.processes().find((p) => p.name === n)?.pids ?? []]),
    );
    const {
      result,
      cpuMsPerOp: used,
      writesPerOp: writes,
      faultsPerOp: faults,
    } = await measureLoad(
      s,
      {
        ...byProcess,
        server: pids,
        postgres: () => environment.pg.pids(),
        [POSTGRES_CLIENTS]: () => environment.pg.clientPids(),
      },
      () => environment.pg.statements?.reset() ?? Promise.resolve(),
    );
    const postgresMsPerOp = used.postgres ?? Number.NaN;
    const cpuMsPerOp = (used.server ?? Number.NaN) + postgresMsPerOp;
    // Postgres's writes: its client backends' only (servers/postgres.ts clientPids).
    const writesOf = (n: string) => writes[n === "postgres" ? POSTGRES_CLIENTS : n] ?? Number.NaN;
    const writesPerOp = writesOf("server") + writesOf("postgres");
    rows.push({ name, result, cpuMsPerOp, postgresMsPerOp, writesPerOp });
    say(
      `  ${name}: ${fixed(result.opsPerSecond)} ops/s, p99 ${fixed(result.p99)} ms, ${fixed(cpuMsPerOp, 2)} CPU ms/op`,
    );
    if (names.length > 1) {
      const each = names.map((n) => `${n} ${fixed(used[n] ?? Number.NaN, 2)}`);
      say(`    CPU ms/op by process: ${each.join(", ")}`);
    }
    const writers = names.length > 0 ? names : ["server", "postgres"];
    say(`    write calls/op by process: ${writers.map((n) => `${n} ${fixed(writesOf(n), 2)}`).join(", ")}`);
    say(
      `    page faults/op by process: ${writers.map((n) => `${n} ${fixed(faults[n] ?? Number.NaN, 2)}`).join(", ")}`,
    );
    const statements = environment.pg.statements;
    if (statements) {
      const top = await statements.perOp(result.opsPerSecond * s.seconds, settings.BENCH_PG_STATEMENTS);
      say("    Postgres's statements by time: runs/op, µs a run, rows a run, text");
      for (const f of top) {
        say(
          `      ${fixed(f.callsPerOp, 2)}  ${fixed(f.meanUs)}  ${fixed(f.rows, 1)}  ${f.query.slice(0, 140)}`,
        );
      }
    }
  };
  const floorPids = () => [
    ...(floor.process.child.pid ? [floor.process.child.pid] : []),
    ...environment.pg.pids(),
  ];
  const floorRun = (name: string) =>
    measure(name, scenario(floorUrl, "single", "/insert", floorBody), floorPids);
  const gatewayRuns = async (label: string, backend: Backend, space: BenchSpace) => {
    const lifecycleBody = mintBody(space, "LITE");
    const pids = () =>
      backend
        .processes()
        .filter((p) => p.name !== "postgres")
        .flatMap((p) => p.pids);
    await measure(
      `${label}: ${mintRun}`,
      scenario(backend.gatewayUrl, "single", "/v1/sessions/token", mintBody(space, mintMode), space),
      pids,
      backend,
    );
    await floorRun(`floor after ${label}: mint`);
    await measure(
      `${label}: mint + start + stop`,
      scenario(backend.gatewayUrl, "lifecycle", "/v1/sessions/token", lifecycleBody, space),
      pids,
      backend,
    );
    await floorRun(`floor after ${label}: lifecycle`);
  };

  await floorRun("floor: node:http + 1 insert");
  const processTable: string[] = [];
  if (topologies.has("suite")) {
    const { own, space } = await prepareOwnDatabase(environment, keySpread);
    const suite = await startSuiteBackend(own);
    try {
      processTable.push(...(await idleFigures(suite, "suite")));
      await gatewayRuns("suite", suite, space);
      for (const text of suite.exited()) say(text);
    } finally {
      await suite.stop();
      await dropOwnDatabase(own);
    }
  }
  if (topologies.has("processes")) {
    const { own, space } = await prepareOwnDatabase(environment, keySpread);
    const processes = await startProcessBackend(own);
    try {
      processTable.push(...(await idleFigures(processes, "processes")));
      await gatewayRuns("processes", processes, space);
      for (const text of processes.exited()) say(text);
    } finally {
      await processes.stop();
      await dropOwnDatabase(own);
    }
  }
  report(processTable);
} finally {
  await floor.stop();
  await environment.stop();
}

/**
 * RSS 2 s after the processes were ready, and once they have been at rest for AT_REST_MS: what start-up
 * left (V8 keeps its garbage until the heap's limit or its memory reducer calls for a collection, which
 * it does after some seconds of rest; NODE_FLAGS raise that limit) and what an idle process keeps. Over
 * that rest, what an idle process costs the host: its CPU time and its wake-ups a second (timers, polls
 * and monitors that run with nothing to serve; on a shared host they take a core from whoever is busy).
 */
async function idleFigures(backend: Backend, label: string): Promise<string[]> {
  const rss = (p: { pids: number[] }) => sumOver(p.pids, rssBytes);
  const measured = () => backend.processes().filter((p) => p.name in backend.readyMs);
  const pidsOf = (name: string) => () => measured().find((p) => p.name === name)?.pids ?? [];
  await new Promise((r) => setTimeout(r, 2_000));
  const early = new Map(measured().map((p) => [p.name, rss(p)]));
  const atRest = measured().map((p) => ({
    name: p.name,
    cpu: growthReading(pidsOf(p.name), cpuSeconds),
    wakeups: growthReading(pidsOf(p.name), wakeups),
  }));
  await new Promise((r) => setTimeout(r, AT_REST_MS));
  const seconds = AT_REST_MS / 1000;
  return measured().map((p) => {
    const rest = atRest.find((r) => r.name === p.name);
    return (
      `${`${label}: ${p.name}`.padEnd(34)}${`${fixed(backend.readyMs[p.name] ?? Number.NaN, 0)} ms`.padEnd(14)}` +
      `${mib(early.get(p.name) ?? 0).padEnd(14)}${mib(rss(p)).padEnd(22)}` +
      `${fixed(rest ? (rest.cpu() * 1000) / seconds : Number.NaN, 1).padEnd(16)}` +
      `${fixed(rest ? rest.wakeups() / seconds : Number.NaN, 0)}`
    );
  });
}

function report(processTable: string[]): void {
  say("");
  say(
    `${"run".padEnd(34)}${"ops/s".padEnd(10)}${"req/s".padEnd(10)}${"p50 ms".padEnd(9)}${"p99 ms".padEnd(9)}${"CPU ms/op (pg)".padEnd(15)}${"writes/op".padEnd(10)}not 2xx`,
  );
  for (const { name, result: r, cpuMsPerOp, postgresMsPerOp, writesPerOp } of rows) {
    const bad = Object.entries(r.statuses).map(([code, n]) => `${code} x${n}`);
    if (r.errors > 0) bad.push(`errors x${r.errors}`);
    say(
      `${name.padEnd(34)}${fixed(r.opsPerSecond).padEnd(10)}${fixed(r.requestsPerSecond).padEnd(10)}` +
        `${fixed(r.p50).padEnd(9)}${fixed(r.p99).padEnd(9)}${`${fixed(cpuMsPerOp, 2)} (${fixed(postgresMsPerOp, 2)})`.padEnd(15)}${fixed(writesPerOp, 1).padEnd(10)}${bad.join(", ") || "0"}`,
    );
  }
  const ratios: [string, string, "throughput" | "p99", string][] = [
    ["suite: mint throughput", `suite: ${mintRun}`, "throughput", ">= 0.5"],
    ["suite: mint p99 (times the floor's)", `suite: ${mintRun}`, "p99", "<= 3"],
    ["processes: mint throughput", `processes: ${mintRun}`, "throughput", ">= 0.25"],
    ["suite: mint + start + stop throughput", "suite: mint + start + stop", "throughput", ">= 0.2"],
    ["processes: mint + start + stop", "processes: mint + start + stop", "throughput", "-"],
  ];
  say("");
  say("ratios to the floor (the mean of the floor runs just before and just after the measurement)");
  for (const [name, runName, figure, target] of ratios) {
    const index = rows.findIndex((r) => r.name === runName);
    const run = rows[index];
    const floors = adjacentFloors(rows, index, (r) => r.name.startsWith("floor"));
    if (!run || floors.length === 0) continue;
    const value = (r: LoadResult) => (figure === "p99" ? r.p99 : r.opsPerSecond);
    const floor = floors.reduce((sum, f) => sum + value(f.result), 0) / floors.length;
    const against = floors.map((f) => fixed(value(f.result))).join(" and ");
    say(
      `  ${name.padEnd(40)}${fixed(value(run.result) / floor, 3).padEnd(8)}target ${target.padEnd(9)}` +
        `(floor ${against}${figure === "p99" ? " ms" : " req/s"})`,
    );
  }
  if (processTable.length > 0) {
    say("");
    say(
      `${"process".padEnd(34)}${"start->ready".padEnd(14)}${"RSS at 2 s".padEnd(14)}${`idle RSS (${AT_REST_MS / 1000} s more)`.padEnd(22)}` +
        `${"idle CPU ms/s".padEnd(16)}wake-ups/s`,
    );
    for (const line of processTable) say(line);
  }
}
