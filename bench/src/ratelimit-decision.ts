/**
 * `pnpm bench:ratelimit`: how long the rate limiter alone takes to decide (RateLimiter.hit), with the
 * in-memory counters of one gateway and with the NATS KV counters shared by all gateways (a nats-server
 * of its own, as `pnpm bench`). Targets (issue 11): p99 under 50 µs in memory, under 1 ms with NATS KV.
 *
 * Settings (environment): BENCH_RATELIMIT_HITS (memory, default 200000), BENCH_RATELIMIT_KV_HITS
 * (default 5000), BENCH_RATELIMIT_CONCURRENCY (KV decisions in flight at once, default 20),
 * BENCH_RATELIMIT_RATE (KV decisions started per second in the paced rows, default 2500).
 *
 * "n at once" keeps n decisions in flight whatever they take: it measures the store at saturation, where
 * each waits for those ahead of it (its p50 is about n divided by the store's throughput). The paced row
 * starts decisions at a steady rate instead, the load a gateway puts on the store: 2,500 a second is more
 * than one gateway process served in `pnpm bench` (1,800-2,300 mints a second as separate processes).
 */
import { cpus, loadavg } from "node:os";
import { connectNatsBus } from "@avatar/bus";
import { MemoryCounterStore, openKvCounterStore, RateLimiter } from "@avatar/gateway";
import { env, readConfig, silentLogger } from "@avatar/runtime";
import { startNatsServer } from "@avatar/testkit";
import { say } from "./print.js";

const settings = readConfig({
  BENCH_RATELIMIT_HITS: env.int({ default: 200_000, min: 1_000 }),
  BENCH_RATELIMIT_KV_HITS: env.int({ default: 5_000, min: 100 }),
  BENCH_RATELIMIT_CONCURRENCY: env.int({ default: 20, min: 1 }),
  BENCH_RATELIMIT_RATE: env.int({ default: 2_500, min: 1 }),
});

/** Decision times in microseconds, `concurrency` decisions in flight, over 1,000 credentials. */
async function decisions(limiter: RateLimiter, hits: number, concurrency: number): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < hits) {
      const i = next++;
      const t0 = performance.now();
      await limiter.hit({
        credential: `key:bench-${i % 1000}`,
        endpoint: "POST /v1/sessions/token",
        limit: 10,
      });
      times.push((performance.now() - t0) * 1000);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return times.sort((a, b) => a - b);
}

/** Who the paced decisions count: 1,000 credentials at the interface's limit, or one with a high limit. */
interface Callers {
  credentials: number;
  limit: number;
}

/**
 * Decisions started at `perSecond` whatever the answers do (those due in one tick of the timer start
 * together), each timed from its start.
 */
async function paced(
  limiter: RateLimiter,
  hits: number,
  perSecond: number,
  callers: Callers = { credentials: 1000, limit: 10 },
): Promise<number[]> {
  const times: number[] = [];
  const running: Promise<void>[] = [];
  const start = performance.now();
  let next = 0;
  while (next < hits) {
    const elapsed = performance.now() - start;
    for (; next < hits && (next * 1000) / perSecond <= elapsed; next++) {
      const t0 = performance.now();
      const decided = limiter.hit({
        credential: `key:bench-${next % callers.credentials}`,
        endpoint: "POST /v1/sessions/token",
        limit: callers.limit,
      });
      running.push(decided.then(() => void times.push((performance.now() - t0) * 1000)));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(running);
  return times.sort((a, b) => a - b);
}

function line(name: string, sorted: number[], target: string): string {
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  const us = (n: number) => `${n.toFixed(1)} µs`;
  return `${name.padEnd(38)}${String(sorted.length).padEnd(9)}${us(at(50)).padEnd(12)}${us(at(99)).padEnd(12)}${us(at(99.9)).padEnd(12)}${target}`;
}

say(
  `pnpm bench:ratelimit, ${new Date().toISOString()}: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
const rows: string[] = [];
const memory = new RateLimiter({ store: new MemoryCounterStore(), logger: silentLogger });
await decisions(memory, 20_000, 1); // warm-up
rows.push(
  line("memory, one at a time", await decisions(memory, settings.BENCH_RATELIMIT_HITS, 1), "p99 < 50 µs"),
);

const nats = await startNatsServer();
const bus = await connectNatsBus({ url: nats.url, name: "bench-ratelimit", logger: () => {} });
try {
  // As the gateway runs it (its default timeout): a decision that would wait longer fails open instead.
  const kv = new RateLimiter({
    store: await openKvCounterStore(bus),
    logger: silentLogger,
    storeTimeoutMs: 100,
  });
  await decisions(kv, 500, 1); // warm-up
  rows.push(
    line("NATS KV, one at a time", await decisions(kv, settings.BENCH_RATELIMIT_KV_HITS, 1), "p99 < 1 ms"),
  );
  const rate = settings.BENCH_RATELIMIT_RATE;
  rows.push(
    line(
      `NATS KV, ${rate.toLocaleString("en")} a second`,
      await paced(kv, settings.BENCH_RATELIMIT_KV_HITS, rate),
      "p99 < 1 ms",
    ),
  );
  // One key granted a million a second, as `pnpm bench` runs: its numbers come in leases (kv-store.ts).
  rows.push(
    line(
      `NATS KV, one key, ${rate.toLocaleString("en")} a second`,
      await paced(kv, settings.BENCH_RATELIMIT_KV_HITS, rate, { credentials: 1, limit: 1_000_000 }),
      "p99 < 1 ms",
    ),
  );
  const c = settings.BENCH_RATELIMIT_CONCURRENCY;
  rows.push(
    line(`NATS KV, ${c} at once`, await decisions(kv, settings.BENCH_RATELIMIT_KV_HITS, c), "p99 < 1 ms"),
  );
} finally {
  await bus.close();
  await nats.stop();
}
say("");
say(
  `${"rate-limit decision".padEnd(38)}${"hits".padEnd(9)}${"p50".padEnd(12)}${"p99".padEnd(12)}${"p99.9".padEnd(12)}target`,
);
for (const r of rows) say(r);
