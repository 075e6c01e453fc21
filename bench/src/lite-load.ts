/**
 * `pnpm bench:lite`: N concurrent LITE sessions, each streaming one second of audio every second in real
 * time over the event WebSocket; prints the round trip of each chunk (sent -> agent.audio_buffer_appended
 * received) at p50/p99, the chunks lost, the memory (peak RSS, and what it keeps at rest after the load) and CPU use of every process, its write
 * calls, page faults and preemptions per chunk, and how many stalls held the chunks over the target's bound, for
 * each level of sessions. Next to each level, the floor measured in the same run: the same clients against a
 * bare `ws` server (its own process) that acknowledges each chunk. The RSS of a group of processes
 * (postgres) is the sum of theirs, so shared memory counts more than once.
 *
 * The floor is measured on either side of the backend, half its window before and half after, both
 * sets of sockets open throughout and only the measured side streaming; its figures pool the two
 * windows. This host's tail swings from one minute to the next (the floor's p99 alone read 1.5 to 7.1 ms
 * in four runs of one hour), so one floor window before the backend made the ratio a draw. The backend
 * streams without a break over its window: measured in turns with the floor, its sessions falling quiet
 * every few seconds read a p99 twice that of streaming throughout. Between levels its sessions are quiet
 * while the floor is measured and the new ones open; each window starts after its warm-up.
 *
 * Needs Debian's postgresql-15 and nats-server, as `pnpm bench`. Settings (environment):
 *   BENCH_LITE_SESSIONS   levels of concurrent sessions, comma-separated and increasing (default 1000)
 *   BENCH_LITE_SECONDS    measured seconds per level (default 20), for the backend and for the floor
 *   BENCH_LITE_WARMUP_SECONDS  streaming before each measured window (default 5)
 *   BENCH_LITE_TOPOLOGY   processes (every service its own process, on NATS; the default) or suite
 *                         (the one-process suite of `pnpm start`)
 *   BENCH_LITE_OPEN_CONCURRENCY  sessions opened at once while ramping up (default 16)
 *   BENCH_FROM_SOURCE     run the TypeScript sources instead of the bundles of `pnpm build`
 *   BENCH_CPU_PROFILE_DIR write a `--cpu-prof` profile of every backend process there (only of those
 *                         named in BENCH_CPU_PROFILE_PROCESSES, e.g. gateway,pipeline, when it is set)
 *   BENCH_LITE_PAUSE      NAME:MS stops the backend's process group NAME (as the figures name them:
 *                         pipeline, gateway, nats-server, ...) with SIGSTOP for MS milliseconds in the
 *                         middle of each backend window, as a host or a collection might: the p99 by
 *                         second then shows whether and how fast the backend recovers
 *   BENCH_LITE_UTTERANCES spread (the default): each session's utterances of 5 chunks begin at its own
 *                         chunk, as independent callers' would; in-step: every session's begin and end
 *                         in the same second (all start streaming together), a burst of utterance ends
 *                         every 5 s: the load of every run before 2026-12-07 22:00
 */

import { cpus, loadavg } from "node:os";
import { env, readConfig } from "@avatar/runtime";
import { AT_REST_MS } from "./at-rest.js";
import type { Backend } from "./backend/backend.js";
import { startBenchEnvironment } from "./backend/environment.js";
import { prepareSpace } from "./backend/prepare.js";
import { startProcessBackend } from "./backend/processes.js";
import { startSuiteBackend } from "./backend/suite.js";
import { formatLoopDelays, readLoopDelays } from "./event-loop-delay.js";
import { startFloor } from "./floor/start-floor.js";
import { recovery } from "./lite/recovery.js";
import { RoundTrips, type Stalls } from "./lite/round-trips.js";
import {
  CHUNKS_PER_UTTERANCE,
  floorSession,
  gatewaySession,
  type SessionSource,
  StreamingSession,
} from "./lite/streaming-session.js";
import { readMetricsPage } from "./metrics-page.js";
import { fixed, say } from "./print.js";
import {
  cpuSeconds,
  growthReading,
  mallocHeapBytes,
  mib,
  pageFaults,
  preemptions,
  rssBytes,
  sumOver,
  writeCalls,
} from "./proc.js";

/** The target: the backend's p99 round trip at most this many times the floor's (issue #11). */
const TARGET_P99_RATIO = 3;

/** The second reading of what processes keep after the load (restAfterLoad). */
const LONG_REST_MS = 120_000;

const settings = readConfig({
  BENCH_LITE_SESSIONS: env.string({ default: "1000" }),
  BENCH_LITE_SECONDS: env.int({ default: 20, min: 1 }),
  BENCH_LITE_WARMUP_SECONDS: env.int({ default: 5, min: 0 }),
  BENCH_LITE_TOPOLOGY: env.oneOf(["processes", "suite"], { default: "processes" }),
  BENCH_LITE_OPEN_CONCURRENCY: env.int({ default: 16, min: 1 }),
  BENCH_FROM_SOURCE: env.bool({ default: false }),
  BENCH_CPU_PROFILE_DIR: env.optionalString(),
  BENCH_LITE_PAUSE: env.optionalString(),
  BENCH_LITE_UTTERANCES: env.oneOf(["spread", "in-step"], { default: "spread" }),
});
const pause = parsePause(settings.BENCH_LITE_PAUSE);
const levels = settings.BENCH_LITE_SESSIONS.split(",").map((s) => Number(s.trim()));
if (levels.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= (levels[i - 1] ?? 0)))) {
  throw new Error("BENCH_LITE_SESSIONS must be increasing positive integers, e.g. 200,400,600");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : "-");

say(
  `pnpm bench:lite, ${new Date().toISOString()}: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
const environment = await startBenchEnvironment({
  fromSource: settings.BENCH_FROM_SOURCE,
  cpuProfileDir: settings.BENCH_CPU_PROFILE_DIR,
});
say(`${environment.pg.version}; ${environment.natsVersion}`);
say(
  `each level: the floor ${settings.BENCH_LITE_SECONDS / 2} s, the backend ${settings.BENCH_LITE_SECONDS} s, the floor ${settings.BENCH_LITE_SECONDS / 2} s, each after ${settings.BENCH_LITE_WARMUP_SECONDS} s of streaming; utterances ${settings.BENCH_LITE_UTTERANCES}`,
);
const floor = await startFloor("bench/src/floor/ws-floor.ts");
let backend: Backend | undefined;
const sessions: StreamingSession[] = [];
const floorSessions: StreamingSession[] = [];

try {
  const space = await prepareSpace(environment.env);
  say(
    `starting the backend (${settings.BENCH_LITE_TOPOLOGY}, ${environment.fromSource ? "TypeScript sources" : "bundles of pnpm build"}) ...`,
  );
  backend =
    settings.BENCH_LITE_TOPOLOGY === "processes"
      ? await startProcessBackend(environment)
      : await startSuiteBackend(environment);
  const gateway = gatewaySession(backend.gatewayUrl, space.apiKeys[0] ?? "", space.avatarId);

  const rows: string[] = [];
  const floorSide: Side = { sessions: floorSessions, trips: new RoundTrips() };
  const backendSide: Side = { sessions, trips: new RoundTrips() };
  for (const level of levels) {
    const floorFailed = await openUpTo(floorSide, level, floorSession(floor.url));
    const t0 = performance.now();
    const failed = await openUpTo(backendSide, level, gateway);
    say(
      `  ${sessions.length} sessions open (${((performance.now() - t0) / 1000).toFixed(1)} s to open the new ones)`,
    );
    const measured = await floorAroundBackend(floorSide, backendSide, groups(), backend.metricsUrls);
    const levelRows = [
      row("bare ws", level, measured.floor, floorFailed),
      row(settings.BENCH_LITE_TOPOLOGY, level, measured.backend, failed),
      `         peak RSS (CPU over the window): ${measured.memory}`,
      `         event-loop delay p99/max over the window: ${measured.loopDelays}`,
      `         write calls per chunk sent: ${measured.writes}`,
      `         page faults per chunk sent (memory touched anew): ${measured.faults}`,
      `         preemptions per chunk sent (a thread made to wait while it could run): ${measured.preemptions}`,
      `         ${stallLine(measured.stalls)}`,
      `         p99 by second of the window (ms): ${measured.bySecond.map((p) => (Number.isFinite(p) ? Math.round(p) : "-")).join(" ")}`,
      ...(pause ? [`         ${recoveryLine(measured.bySecond, measured.stalls.overMs)}`] : []),
      `         client messages the gateway sent again, per chunk: ${measured.resent || "none"}`,
      ...measured.cpuBySecond.map((line) => `         CPU % by second: ${line}`),
      `         p99 ratio to the bare-ws floor: ${(measured.backend.p99 / measured.floor.p99).toFixed(2)} (target <= ${TARGET_P99_RATIO}, no chunk lost)`,
    ];
    rows.push(...levelRows);
    for (const line of levelRows) say(line);
    if (failed.length > 0 || !keepsUp(measured.backend)) break;
  }
  say("");
  say(
    `one 1 s chunk (64 KiB of base64) per session per second, ${CHUNKS_PER_UTTERANCE} to an utterance, utterances ${settings.BENCH_LITE_UTTERANCES}`,
  );
  say("against   sessions sent    acked   lost  p50        p99        max        fails  keeps up");
  for (const line of rows) say(line);
  say("keeps up: no chunk lost, no error or closed socket, p99 under the 1 s between chunks");
  for (const line of await restAfterLoad(groups())) say(line);
  for (const text of backend.exited()) say(`\n${text}`);
} finally {
  await Promise.all(sessions.map((s) => s.stop()));
  await Promise.all(floorSessions.map((s) => s.stop()));
  await backend?.stop();
  await floor.stop();
  await environment.stop();
}

type Summary = ReturnType<RoundTrips["summary"]>;

function keepsUp(s: Summary): boolean {
  return s.lost === 0 && s.errors === 0 && s.closed === 0 && s.p99 < 1_000;
}

function row(against: string, level: number, s: Summary, failed: string[]): string {
  const line =
    `${against.padEnd(10)}${String(level).padEnd(9)}${String(s.sent).padEnd(8)}${String(s.acked).padEnd(8)}${String(s.lost).padEnd(6)}` +
    `${ms(s.p50).padEnd(11)}${ms(s.p99).padEnd(11)}${ms(s.max).padEnd(11)}${String(s.errors + s.closed).padEnd(7)}${keepsUp(s) && failed.length === 0 ? "yes" : "NO"}`;
  if (failed.length === 0) return line;
  const counts = new Map<string, number>();
  for (const f of failed) counts.set(f, (counts.get(f) ?? 0) + 1);
  const counted = [...counts].map(([f, n]) => `${f} x${n}`);
  return `${line}\n          could not open ${failed.length} of the sessions: ${counted.join(", ")}`;
}

/** One side of the comparison: its open sockets and their round trips. */
interface Side {
  sessions: StreamingSession[];
  trips: RoundTrips;
}

/**
 * One level: the floor's sockets stream for half a window, then the backend's for a window, then the
 * floor's again (the other side's sockets open and quiet). Answers each side's round trips, and over the
 * backend's window its processes' peak RSS, CPU, write calls per chunk and event-loop delay.
 */
async function floorAroundBackend(
  floorSide: Side,
  backendSide: Side,
  watched: { name: string; pids: number[] }[],
  metricsUrls: Record<string, string>,
) {
  floorSide.trips.reset();
  await streamed(floorSide, settings.BENCH_LITE_SECONDS / 2);

  backendSide.trips.reset();
  const peak = new Map<string, number>();
  let readings: {
    name: string;
    cpu: () => number;
    writes: () => number;
    preempted: () => number;
    faults: () => number;
  }[] = [];
  let spent: { name: string; cpu: number; writes: number; preempted: number; faults: number }[] = [];
  /** Each process group's CPU share in each second of the window. */
  const cpuBySecond = new Map<string, number[]>();
  let sampler: NodeJS.Timeout | undefined;
  let pauser: NodeJS.Timeout | undefined;
  let loopDelays = "";
  let resentBefore = new Map<string, number>();
  let resent = new Map<string, number>();
  let undoPause: (() => void) | undefined;
  await streamed(backendSide, settings.BENCH_LITE_SECONDS, {
    async start() {
      await readLoopDelays(metricsUrls);
      resentBefore = await readResent(metricsUrls.gateway);
      readings = watched.map(({ name, pids }) => ({
        name,
        cpu: growthReading(() => pids, cpuSeconds),
        // Postgres's writes: its client backends' only, as pnpm bench counts them (servers/postgres.ts).
        writes: growthReading(
          name === "postgres" ? () => environment.pg.clientPids() : () => pids,
          writeCalls,
        ),
        preempted: growthReading(() => pids, preemptions),
        faults: growthReading(() => pids, pageFaults),
      }));
      let lastCpu = readings.map((r) => r.cpu());
      sampler = setInterval(() => {
        sampleRss(watched, peak);
        const cpu = readings.map((r) => r.cpu());
        readings.forEach(({ name }, i) => {
          const seconds = cpuBySecond.get(name) ?? [];
          seconds.push((cpu[i] ?? 0) - (lastCpu[i] ?? 0));
          cpuBySecond.set(name, seconds);
        });
        lastCpu = cpu;
      }, 1_000);
      if (pause) {
        const group = pausedGroup(watched, pause.name);
        pauser = setTimeout(
          () => {
            undoPause = stopFor(group, pause.ms);
          },
          (settings.BENCH_LITE_SECONDS * 1000) / 2,
        );
      }
    },
    async end() {
      clearInterval(sampler);
      clearTimeout(pauser);
      undoPause?.();
      sampleRss(watched, peak);
      spent = readings.map(({ name, cpu, writes, preempted, faults }) => ({
        name,
        cpu: cpu(),
        writes: writes(),
        preempted: preempted(),
        faults: faults(),
      }));
      loopDelays = formatLoopDelays(await readLoopDelays(metricsUrls));
      resent = await readResent(metricsUrls.gateway);
    },
  });
  await streamed(floorSide, settings.BENCH_LITE_SECONDS / 2);

  const backend = backendSide.trips.summary();
  const memory = spent
    .map(({ name, cpu }) => {
      const share = cpu / settings.BENCH_LITE_SECONDS;
      return `${name} ${mib(peak.get(name) ?? 0)} (${Math.round(share * 100)}% CPU)`;
    })
    .join(", ");
  const perChunk = (count: (s: (typeof spent)[number]) => number) =>
    spent.map((s) => `${s.name} ${fixed(count(s) / backend.sent, 2)}`).join(", ");
  const floor = floorSide.trips.summary();
  return {
    floor,
    backend,
    memory,
    loopDelays,
    writes: perChunk((s) => s.writes),
    preemptions: perChunk((s) => s.preempted),
    faults: perChunk((s) => s.faults),
    stalls: backendSide.trips.stalls(TARGET_P99_RATIO * floor.p99),
    bySecond: backendSide.trips.p99BySecond(),
    resent: [...resent]
      .map(([reason, n]) => `${reason} ${fixed((n - (resentBefore.get(reason) ?? 0)) / backend.sent, 3)}`)
      .join(", "),
    // The groups that kept a tenth of a core busy over the window.
    cpuBySecond: [...cpuBySecond]
      .filter(([, seconds]) => seconds.reduce((a, b) => a + b, 0) > 0.1 * seconds.length)
      .map(([name, seconds]) => `${name} ${seconds.map((c) => Math.round(c * 100)).join(" ")}`),
  };
}

/**
 * Streams `side` for the warm-up and `seconds` measured (adding to its round trips), then quiets it and
 * gives the acknowledgements still on their way a moment before they count as lost.
 */
async function streamed(
  side: Side,
  seconds: number,
  around?: { start(): Promise<void>; end(): Promise<void> },
): Promise<void> {
  for (const s of side.sessions) s.stream();
  await sleep(settings.BENCH_LITE_WARMUP_SECONDS * 1000);
  await around?.start();
  side.trips.resume();
  await sleep(seconds * 1000);
  side.trips.end();
  await around?.end();
  for (const s of side.sessions) s.pause();
  await sleep(2_000);
}

/** Opens sessions from `source` until `side` has `level` (quiet until a window streams them); answers why the ones that could not be opened failed. */
async function openUpTo(side: Side, level: number, source: SessionSource): Promise<string[]> {
  const list = side.sessions;
  const failures: string[] = [];
  const queue = Array.from({ length: level - list.length }, (_, i) => list.length + i);
  const opened: StreamingSession[] = [];
  await Promise.all(
    Array.from({ length: settings.BENCH_LITE_OPEN_CONCURRENCY }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        const phase = settings.BENCH_LITE_UTTERANCES === "spread" ? i % CHUNKS_PER_UTTERANCE : 0;
        const session = new StreamingSession(source, ip, side.trips, i, phase);
        try {
          await session.open();
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
          continue;
        }
        opened.push(session);
      }
    }),
  );
  list.push(...opened);
  return failures;
}

/** Where the chunks over the target's bound came from: how many stalls held them. */
function stallLine(stalls: Stalls): string {
  const { overMs, chunks, share, largest } = stalls;
  return `chunks over ${TARGET_P99_RATIO}x the floor's p99 (${fixed(overMs, 1)} ms): ${chunks} (${fixed(share * 100, 2)} %), in ${stalls.stalls} stalls; the largest held ${largest.chunks} over ${fixed(largest.ms, 0)} ms`;
}

function parsePause(setting: string | undefined): { name: string; ms: number } | undefined {
  if (setting === undefined) return undefined;
  const match = /^([a-z-]+):(\d+)$/.exec(setting.trim());
  if (!match) throw new Error("BENCH_LITE_PAUSE must be NAME:MS, e.g. pipeline:3000");
  return { name: match[1] as string, ms: Number(match[2]) };
}

/** The process group BENCH_LITE_PAUSE names, checked before the window starts. */
function pausedGroup(watched: { name: string; pids: number[] }[], name: string): { pids: number[] } {
  const group = watched.find((w) => w.name === name);
  if (!group)
    throw new Error(`BENCH_LITE_PAUSE: no process group ${name} (${watched.map((w) => w.name).join(", ")})`);
  return group;
}

/**
 * Stops a process group for `ms`, as the host or a long collection would; answers what lets it go at
 * once (a pause longer than what is left of the window must not outlast it).
 */
function stopFor(group: { pids: number[] }, ms: number): () => void {
  for (const pid of group.pids) process.kill(pid, "SIGSTOP");
  let stopped = true;
  const resume = () => {
    if (!stopped) return;
    stopped = false;
    clearTimeout(timer);
    for (const pid of group.pids) process.kill(pid, "SIGCONT");
  };
  const timer = setTimeout(resume, ms);
  return resume;
}

/** After the pause in the middle of the window: how long the backend took to be back to how it was. */
function recoveryLine(bySecond: number[], overMs: number): string {
  const pausedAt = settings.BENCH_LITE_SECONDS / 2;
  const resumedAt = pausedAt + (pause?.ms ?? 0) / 1000;
  const { limitMs, fromSecond } = recovery(bySecond, pausedAt, overMs);
  const paused = `paused ${pause?.name} ${pause?.ms} ms at ${pausedAt} s`;
  const limit = `${fixed(limitMs, 1)} ms (the bound, or twice the median second before the pause)`;
  return fromSecond === undefined
    ? `${paused}: not back within ${limit} by the window's end`
    : `${paused}: every second's p99 within ${limit} from second ${fromSecond} on, ${fixed(Math.max(0, fromSecond - resumedAt), 1)} s after it resumed`;
}

/** The gateway's avatar_ws_messages_resent_total, by reason (empty when its metrics cannot be read). */
async function readResent(url: string | undefined): Promise<Map<string, number>> {
  const text = url === undefined ? undefined : await readMetricsPage(url);
  const counts = new Map<string, number>();
  for (const match of text?.matchAll(/^avatar_ws_messages_resent_total\{reason="(\w+)"\} (\S+)$/gm) ?? []) {
    counts.set(match[1] as string, Number(match[2]));
  }
  return counts;
}

function groups() {
  return [...(backend?.processes() ?? []), { name: "bench clients", pids: [process.pid] }];
}

/**
 * What each process keeps after the load (the idle target is 80 MiB a service): every session ended, its
 * RSS once it has been at rest for AT_REST_MS (as `pnpm bench` reads idle RSS) and again after
 * LONG_REST_MS, by when V8's memory reducer has shrunk the busy processes' heaps (it took 60-110 s after
 * 1,000 sessions on 2026-12-07); in parentheses the part that is malloc's main arena (proc.ts
 * mallocHeapBytes), which V8's collections do not give back.
 */
async function restAfterLoad(watched: { name: string; pids: number[] }[]): Promise<string[]> {
  await Promise.all(sessions.splice(0).map((s) => s.stop()));
  const services = watched.filter((w) => w.name !== "bench clients");
  const lines: string[] = [];
  let rested = 0;
  for (const at of [AT_REST_MS, LONG_REST_MS]) {
    await sleep(at - rested);
    rested = at;
    const kept = services.map(({ name, pids }) => {
      return `${name} ${mib(sumOver(pids, rssBytes))} (${mib(sumOver(pids, mallocHeapBytes))})`;
    });
    lines.push(`RSS at rest ${at / 1000} s after every session ended (malloc's heap): ${kept.join(", ")}`);
  }
  return lines;
}

function sampleRss(watched: { name: string; pids: number[] }[], peak: Map<string, number>): void {
  for (const { name, pids } of watched) {
    const total = sumOver(pids, rssBytes);
    peak.set(name, Math.max(peak.get(name) ?? 0, total));
  }
}
