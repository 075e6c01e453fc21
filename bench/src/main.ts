/**
 * `pnpm bench`: the token endpoint through the gateway on embedded Postgres, next to a bare node:http
 * server doing one Postgres insert per request on the same Postgres, in the same run.
 *
 * Settings (environment): BENCH_SECONDS (per measurement, default 10), BENCH_CONCURRENCY (default 16),
 * BENCH_WARMUP_SECONDS (default 2), BENCH_KEYS (API keys to spread the load over, default 300),
 * BENCH_LOG_LEVEL (suite logs on stderr, default error).
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger, env, type LogLevel, readConfig } from "@avatar/runtime";
import { startSuite } from "@avatar/suite";
import { startBaseline } from "./baseline.js";
import { mint, mintStartStop } from "./gateway-ops.js";
import { KeyPool } from "./key-pool.js";
import { type Operation, OperationFailed, runLoad } from "./load.js";
import { type Summary, summarize, table } from "./stats.js";

const settings = readConfig({
  BENCH_SECONDS: env.int({ default: 10, min: 1 }),
  BENCH_CONCURRENCY: env.int({ default: 16, min: 1 }),
  BENCH_WARMUP_SECONDS: env.int({ default: 2, min: 0 }),
  BENCH_KEYS: env.int({ default: 300, min: 1 }),
  BENCH_LOG_LEVEL: env.oneOf(["debug", "info", "warn", "error"], { default: "error" }),
});

const log = createLogger({
  level: settings.BENCH_LOG_LEVEL as LogLevel,
  sink: (line) => process.stderr.write(`${line}\n`),
});
const say = (text: string) => process.stdout.write(`${text}\n`);

const dataDir = await mkdtemp(path.join(tmpdir(), "avatar-bench-"));
// As root, Postgres runs as the `postgres` user, which must be able to enter the folder.
await chmod(dataDir, 0o755);
say(`starting the suite on embedded Postgres (${dataDir}) ...`);
// The suite's pools (5 connections per service) are its defaults; the baseline gets as many.
const POOL_SIZE = 5;
const suite = await startSuite({
  log,
  dataDir,
  gatewayPort: 0,
  gatewayHost: "127.0.0.1",
  env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: settings.BENCH_LOG_LEVEL },
});
const baseline = await startBaseline(suite.databaseUrl, POOL_SIZE);

try {
  // The default (free) tier: its 600 s limit does not matter to minting.
  const { space } = await suite.clients.tokens.createSpace({ name: "Benchmark" });
  const spaceId = space?.id ?? "";
  await suite.clients.sessions.grantCredits({
    spaceId,
    amount: "100000000",
    note: "benchmark",
    idempotencyKey: `bench-${spaceId}`,
  });
  const keys = await KeyPool.create(suite.clients.tokens, spaceId, settings.BENCH_KEYS);
  const [avatar] = (await suite.clients.catalog.listPublicAvatars({ page: { page: 1, pageSize: 1 } }))
    .avatars;
  if (!avatar) throw new Error("the catalog has no public avatar");
  const body = { avatar_id: avatar.id, video_settings: { quality: "high" } };

  const baselineOp: Operation = async () => {
    const res = await fetch(`${baseline.url}/insert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new OperationFailed(`baseline ${res.status}`);
  };
  const scenarios: [string, Operation][] = [
    ["baseline: node:http + 1 insert", baselineOp],
    ["POST /v1/sessions/token", () => mint(suite.gatewayUrl, keys, body).then(() => undefined)],
    ["token + start + stop", () => mintStartStop(suite.gatewayUrl, keys, body)],
  ];

  const { BENCH_CONCURRENCY: concurrency, BENCH_SECONDS: seconds, BENCH_WARMUP_SECONDS: warmup } = settings;
  say(
    `concurrency ${concurrency}, ${seconds} s per measurement after ${warmup} s of warm-up, ` +
      `${keys.size} API keys (at most 9 requests per key per second: the 10/s limit is not raised)`,
  );
  const results: Summary[] = [];
  for (const [name, op] of scenarios) {
    if (warmup > 0) await runLoad(name, op, { concurrency, seconds: warmup });
    const result = summarize(await runLoad(name, op, { concurrency, seconds }));
    results.push(result);
    say(`  measured ${name}: ${result.throughput.toFixed(1)} ops/s`);
  }

  say("");
  say(table(results));
  say("");
  const [base, token, lifecycle] = results;
  if (base && token && lifecycle) {
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "-");
    say(`throughput ratio token / baseline:               ${ratio(token.throughput, base.throughput)}`);
    say(`throughput ratio token+start+stop / baseline:    ${ratio(lifecycle.throughput, base.throughput)}`);
    say(`p50 latency ratio token / baseline:              ${ratio(token.p50, base.p50)}`);
    say(`p50 latency ratio token+start+stop / baseline:   ${ratio(lifecycle.p50, base.p50)}`);
  }
} finally {
  await baseline.close();
  await suite.stop();
  await rm(dataDir, { recursive: true, force: true });
}
