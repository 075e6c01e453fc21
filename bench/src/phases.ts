/**
 * `pnpm bench:phases`: what each step of a session's life costs, one step at a time. `pnpm bench`'s
 * lifecycle measures mint + start + stop together; here N sessions are minted, then the N are started,
 * then the N stopped, each step alone, and for each the CPU time every process of the backend spent per
 * session (Postgres's share included) and the Connect calls its services served per session: which step,
 * which process and which internal call the lifecycle's cost is in.
 *
 * The requests come from this process (fetch, BENCH_CONNECTIONS at once), so the throughput printed is
 * the client's as much as the backend's: read the CPU per session, which does not depend on it.
 *
 * Needs Debian's postgresql-15 and nats-server, as `pnpm bench`. Settings (environment):
 *   BENCH_PHASES_SESSIONS  sessions per round (default 2000)
 *   BENCH_PHASES_ROUNDS    rounds (default 3; the first warms the backend up and is not in the medians)
 *   BENCH_PHASES_TOPOLOGY  suite (the one-process suite, the default) or processes (every service its
 *                          own process on NATS: the cost by service)
 *   BENCH_CONNECTIONS      requests at once (default 20)
 *   BENCH_FROM_SOURCE, BENCH_CPU_PROFILE_DIR  as for `pnpm bench`
 */
import { env, readConfig } from "@avatar/runtime";
import { median } from "./ab/plan.js";
import type { Backend } from "./backend/backend.js";
import { startBenchEnvironment } from "./backend/environment.js";
import { mintBody, prepareSpace } from "./backend/prepare.js";
import { startProcessBackend } from "./backend/processes.js";
import { startSuiteBackend } from "./backend/suite.js";
import { postJson } from "./gateway-post.js";
import { fixed, say } from "./print.js";
import { cpuReading } from "./proc.js";
import { callsPerOperation, readServedCalls } from "./rpc-calls.js";

const settings = readConfig({
  BENCH_PHASES_SESSIONS: env.int({ default: 2000, min: 1 }),
  BENCH_PHASES_ROUNDS: env.int({ default: 3, min: 2 }),
  BENCH_PHASES_TOPOLOGY: env.oneOf(["suite", "processes"], { default: "suite" }),
  BENCH_CONNECTIONS: env.int({ default: 20, min: 1 }),
  BENCH_FROM_SOURCE: env.bool({ default: false }),
  BENCH_CPU_PROFILE_DIR: env.optionalString(),
});

const PHASES = ["mint", "start", "stop"] as const;
type Phase = (typeof PHASES)[number];

/** One step of one round: sessions a second, CPU ms per session by process group, internal calls. */
interface Reading {
  perSecond: number;
  cpuMs: Map<string, number>;
  /** Connect calls served per session, by procedure (rpc-calls.ts). */
  calls: string;
}

const environment = await startBenchEnvironment({
  fromSource: settings.BENCH_FROM_SOURCE,
  cpuProfileDir: settings.BENCH_CPU_PROFILE_DIR,
});
let backend: Backend | undefined;
try {
  const space = await prepareSpace(environment.env);
  backend =
    settings.BENCH_PHASES_TOPOLOGY === "processes"
      ? await startProcessBackend(environment)
      : await startSuiteBackend(environment);
  const url = (path: string) => `${backend?.gatewayUrl}${path}`;
  const apiKey = { "x-api-key": space.apiKeys[0] ?? "" };
  say(
    `pnpm bench:phases, ${new Date().toISOString()}: ${settings.BENCH_PHASES_TOPOLOGY}, ${settings.BENCH_PHASES_SESSIONS} sessions a round, ${settings.BENCH_CONNECTIONS} requests at once; ${environment.pg.version}`,
  );
  const readings: Record<Phase, Reading[]> = { mint: [], start: [], stop: [] };
  for (let round = 1; round <= settings.BENCH_PHASES_ROUNDS; round++) {
    const sessions = Array.from({ length: settings.BENCH_PHASES_SESSIONS }, () => ({ bearer: {} }));
    const steps: Record<Phase, (s: { bearer: Record<string, string> }) => Promise<unknown>> = {
      mint: async (s) => {
        const minted = await postJson(url("/v1/sessions/token"), apiKey, mintBody(space));
        s.bearer = { authorization: `Bearer ${minted.session_token ?? ""}` };
      },
      start: (s) => postJson(url("/v1/sessions/start"), s.bearer, {}),
      stop: (s) => postJson(url("/v1/sessions/stop"), s.bearer, {}),
    };
    for (const phase of PHASES) {
      const reading = await measured(backend, sessions, steps[phase]);
      say(`round ${round} ${phase.padEnd(6)} ${line(reading)}`);
      say(`       Connect calls per session: ${reading.calls}`);
      if (round > 1) readings[phase].push(reading);
    }
  }
  say("");
  say(`medians of rounds 2-${settings.BENCH_PHASES_ROUNDS}: CPU ms per session by process`);
  for (const phase of PHASES) {
    say(`${phase.padEnd(6)} ${line(medianOf(readings[phase]))}`);
    say(`       Connect calls per session (last round): ${readings[phase].at(-1)?.calls ?? "-"}`);
  }
} finally {
  await backend?.stop();
  await environment.stop();
}

/** Runs `step` once for each session, BENCH_CONNECTIONS at a time; the CPU each process group spent. */
async function measured<T>(b: Backend, items: T[], step: (item: T) => Promise<unknown>): Promise<Reading> {
  const groups = b.processes();
  const cpu = groups.map(({ name }) => ({
    name,
    read: cpuReading(() => b.processes().find((g) => g.name === name)?.pids ?? []),
  }));
  const callsBefore = await readServedCalls(b.metricsUrls);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: settings.BENCH_CONNECTIONS }, async () => {
      for (let item = items[next++]; item !== undefined; item = items[next++]) await step(item);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpuMs = new Map(cpu.map(({ name, read }) => [name, (read() * 1000) / items.length]));
  const calls = callsPerOperation(callsBefore, await readServedCalls(b.metricsUrls), items.length);
  return { perSecond: items.length / seconds, cpuMs, calls };
}

function line(r: Reading): string {
  const total = [...r.cpuMs.values()].reduce((a, b) => a + b, 0);
  const parts = [...r.cpuMs].filter(([, ms]) => ms >= 0.005).map(([name, ms]) => `${name} ${fixed(ms, 3)}`);
  return `${fixed(r.perSecond, 0).padStart(6)}/s  CPU ms/session ${fixed(total, 3)}: ${parts.join(", ")}`;
}

function medianOf(list: Reading[]): Reading {
  const names = [...(list[0]?.cpuMs.keys() ?? [])];
  return {
    perSecond: median(list.map((r) => r.perSecond)),
    cpuMs: new Map(names.map((n) => [n, median(list.map((r) => r.cpuMs.get(n) ?? 0))])),
    calls: "",
  };
}
