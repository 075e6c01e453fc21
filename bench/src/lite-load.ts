/**
 * `pnpm bench:lite`: N concurrent LITE sessions, each streaming one second of audio every second in real
 * time over the event WebSocket; prints the round trip of each chunk (sent -> agent.audio_buffer_appended
 * received) at p50/p99 and the memory (peak RSS) and CPU use of every process, for each level of sessions.
 * The RSS of a group of processes (postgres) is the sum of theirs, so shared memory counts more than once.
 *
 * Settings (environment):
 *   BENCH_LITE_SESSIONS   levels of concurrent sessions, comma-separated and increasing (default 200)
 *   BENCH_LITE_SECONDS    measured seconds per level (default 20), after BENCH_LITE_WARMUP_SECONDS (default 5)
 *   BENCH_LITE_TOPOLOGY   processes (every service its own process, on NATS; the default when nats-server
 *                         is installed) or suite (the one-process suite of `pnpm start`)
 *   BENCH_LITE_KEYS       API keys the minting is spread over (default 40; 10 tokens/s per key)
 *   BENCH_LITE_OPEN_CONCURRENCY  sessions opened at once while ramping up (default 16)
 */

import { Tier } from "@avatar/contracts/tokens";
import { env, readConfig } from "@avatar/runtime";
import { natsServerAvailable } from "@avatar/testkit";
import { KeyPool } from "./key-pool.js";
import type { Backend } from "./lite/backend.js";
import { startProcessBackend } from "./lite/backend-processes.js";
import { startSuiteBackend } from "./lite/backend-suite.js";
import { RoundTrips } from "./lite/round-trips.js";
import { cpuSeconds, mib, rssBytes } from "./lite/rss.js";
import { StreamingSession } from "./lite/streaming-session.js";

const settings = readConfig({
  BENCH_LITE_SESSIONS: env.string({ default: "200" }),
  BENCH_LITE_SECONDS: env.int({ default: 20, min: 1 }),
  BENCH_LITE_WARMUP_SECONDS: env.int({ default: 5, min: 0 }),
  BENCH_LITE_TOPOLOGY: env.oneOf(["processes", "suite"], {
    default: natsServerAvailable() ? "processes" : "suite",
  }),
  BENCH_LITE_KEYS: env.int({ default: 40, min: 1 }),
  BENCH_LITE_OPEN_CONCURRENCY: env.int({ default: 16, min: 1 }),
});
const levels = settings.BENCH_LITE_SESSIONS.split(",").map((s) => Number(s.trim()));
if (levels.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= (levels[i - 1] ?? 0)))) {
  throw new Error("BENCH_LITE_SESSIONS must be increasing positive integers, e.g. 200,400,600");
}

const say = (text: string) => process.stdout.write(`${text}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : "-");

say(`starting the backend (${settings.BENCH_LITE_TOPOLOGY}) ...`);
const backend: Backend =
  settings.BENCH_LITE_TOPOLOGY === "processes" ? await startProcessBackend() : await startSuiteBackend();
const sessions: StreamingSession[] = [];
const trips = new RoundTrips();

try {
  const { space } = await backend.clients.tokens.createSpace({ name: "LITE benchmark", tier: Tier.SCALE });
  const spaceId = space?.id ?? "";
  await backend.clients.sessions.grantCredits({ spaceId, amount: "100000000", note: "benchmark" });
  const keys = await KeyPool.create(backend.clients.tokens, spaceId, settings.BENCH_LITE_KEYS);
  const [avatar] = (await backend.clients.catalog.listPublicAvatars({ page: { page: 1, pageSize: 1 } }))
    .avatars;
  if (!avatar) throw new Error("the catalog has no public avatar");

  const rows: string[] = [];
  for (const level of levels) {
    const t0 = performance.now();
    const failed = await openUpTo(level, avatar.id, keys);
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    say(`  ${sessions.length} sessions open (${seconds} s to open the new ones)`);
    if (failed.length > 0) {
      const counts = new Map<string, number>();
      for (const f of failed) counts.set(f, (counts.get(f) ?? 0) + 1);
      const counted = [...counts].map(([f, n]) => `${f} x${n}`);
      rows.push(`${String(level).padEnd(9)}could not open ${failed.length} sessions: ${counted.join(", ")}`);
      say(rows.at(-1) ?? "");
      break;
    }
    await sleep(settings.BENCH_LITE_WARMUP_SECONDS * 1000);
    trips.begin();
    const peak = new Map<string, number>();
    const cpuBefore = cpuByPid();
    const sampler = setInterval(() => sampleRss(peak), 1_000);
    await sleep(settings.BENCH_LITE_SECONDS * 1000);
    trips.end();
    clearInterval(sampler);
    sampleRss(peak);
    const cpuAfter = cpuByPid();
    // Acknowledgements still on their way are given a moment before they count as lost.
    await sleep(2_000);
    const s = trips.summary();
    const keepsUp = s.lost === 0 && s.errors === 0 && s.closed === 0 && s.p99 < 1_000;
    const memory = [...peak.entries()]
      .map(([name, bytes]) => {
        const cpu = groupCpu(name, cpuBefore, cpuAfter) / settings.BENCH_LITE_SECONDS;
        return `${name} ${mib(bytes)} (${Math.round(cpu * 100)}% CPU)`;
      })
      .join(", ");
    rows.push(
      `${String(level).padEnd(9)}${String(s.sent).padEnd(8)}${String(s.acked).padEnd(8)}${String(s.lost).padEnd(6)}` +
        `${ms(s.p50).padEnd(11)}${ms(s.p99).padEnd(11)}${ms(s.max).padEnd(11)}${String(s.errors + s.closed).padEnd(7)}${keepsUp ? "yes" : "NO"}`,
    );
    rows.push(`         peak RSS (CPU over the window): ${memory}`);
    say(rows.at(-2) ?? "");
    if (!keepsUp) break;
  }
  say("");
  say(`topology: ${settings.BENCH_LITE_TOPOLOGY}; one 1 s chunk (64 KiB of base64) per session per second`);
  say("sessions sent    acked   lost  p50        p99        max        fails  keeps up");
  for (const row of rows) say(row);
  say("keeps up: no chunk lost, no error or closed socket, p99 under the 1 s between chunks");
} finally {
  await Promise.all(sessions.map((s) => s.stop()));
  await backend.stop();
}

/** Opens sessions until `level` are open; answers why the ones that could not be opened failed. */
async function openUpTo(level: number, avatarId: string, keys: KeyPool): Promise<string[]> {
  const failures: string[] = [];
  const queue = Array.from({ length: level - sessions.length }, (_, i) => sessions.length + i);
  const opened: StreamingSession[] = [];
  await Promise.all(
    Array.from({ length: settings.BENCH_LITE_OPEN_CONCURRENCY }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        const session = new StreamingSession(backend.gatewayUrl, keys, avatarId, ip, trips, i);
        try {
          await session.open();
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
          continue;
        }
        session.stream();
        opened.push(session);
      }
    }),
  );
  sessions.push(...opened);
  return failures;
}

function groups() {
  return [...backend.processes(), { name: "bench clients", pids: [process.pid] }];
}

/** CPU seconds used so far, per group and pid. */
function cpuByPid(): Map<string, Map<number, number>> {
  return new Map(
    groups().map(({ name, pids }) => [name, new Map(pids.map((pid) => [pid, cpuSeconds(pid)]))]),
  );
}

/** CPU seconds a group used between two readings, over the processes alive at both. */
function groupCpu(
  name: string,
  before: Map<string, Map<number, number>>,
  after: Map<string, Map<number, number>>,
) {
  let total = 0;
  for (const [pid, end] of after.get(name) ?? []) {
    const start = before.get(name)?.get(pid);
    if (start !== undefined) total += Math.max(0, end - start);
  }
  return total;
}

function sampleRss(peak: Map<string, number>): void {
  for (const { name, pids } of groups()) {
    const total = pids.reduce((sum, pid) => sum + rssBytes(pid), 0);
    peak.set(name, Math.max(peak.get(name) ?? 0, total));
  }
}
