import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  builtEntry,
  type NatsServerHandle,
  natsServerGoEnv,
  repoRoot,
  startNatsServer,
} from "@avatar/testkit";
import pg from "pg";
import { type PostgresServer, startPostgresServer } from "../servers/postgres.js";

/**
 * What both benchmarks run on: a Postgres 15 server and a nats-server of their own, on free loopback
 * ports, and the settings every backend process gets.
 */
export interface BenchEnvironment {
  pg: PostgresServer;
  nats: NatsServerHandle;
  natsVersion: string;
  /** Environment of every backend process (database, keys, limits, logs). */
  env: Record<string, string>;
  /** Runs the bundles of `pnpm build` when they exist (and BENCH_FROM_SOURCE is not set), else the sources. */
  entry(source: string): string;
  readonly fromSource: boolean;
  /**
   * The `node` options of the backend's process `name` (the suite's is "suite"): a CPU profile when
   * asked for (of that process), BENCH_NODE_ARGS.
   */
  nodeArgs(name: string): string[];
  stop(): Promise<void>;
}

export async function startBenchEnvironment(options: {
  fromSource: boolean;
  cpuProfileDir?: string | undefined;
  /** Start Postgres counting each statement's runs and time (servers/postgres-statements.ts). */
  statements?: boolean;
}): Promise<BenchEnvironment> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "avatar-bench-"));
  await chmod(dataDir, 0o755);
  const pg = await startPostgresServer({ statements: options.statements ?? false });
  const nats = await startNatsServer().catch(async (err: unknown) => {
    await pg.stop();
    throw err;
  });
  const built = existsSync(path.join(repoRoot, builtEntry("gateway/src/main.ts")));
  const fromSource = options.fromSource || !built;
  const { execFileSync } = await import("node:child_process");
  const go = natsServerGoEnv();
  const profiled = process.env.BENCH_CPU_PROFILE_PROCESSES?.split(",").map((name) => name.trim());
  const natsVersion = `${execFileSync("nats-server", ["--version"], { encoding: "utf8" }).trim()} (GOGC=${go.GOGC}, GODEBUG=${go.GODEBUG})`;
  return {
    pg,
    nats,
    natsVersion,
    fromSource,
    nodeArgs: (name) => [
      // BENCH_CPU_PROFILE_PROCESSES (e.g. gateway,pipeline) profiles those alone: every process
      // profiled at once saturates the host under bench:lite.
      ...(options.cpuProfileDir && (profiled?.includes(name) ?? true)
        ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`]
        : []),
      // Extra V8 or Node options to try (e.g. --trace-gc, --max-semi-space-size=32), split on spaces.
      ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ],
    env: {
      DATABASE_URL: pg.url,
      DATA_DIR: dataDir,
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
      NATS_NAMESPACE: `bench${randomUUID().slice(0, 6)}`,
      // One key, no 429: the interface's 10 per second would measure the limit, not the service.
      RATE_LIMIT_PER_SECOND: "1000000",
      // Each simulated client of bench:lite has its own address (X-Forwarded-For), as real clients would.
      TRUST_PROXY: "true",
      PIPELINE_CAPACITY: "100000",
      LOG_LEVEL: "warn",
      ...backendEnv(process.env.BENCH_BACKEND_ENV),
    },
    entry: (source) => (fromSource ? source : builtEntry(source)),
    stop: async () => {
      await nats.stop();
      await pg.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let databases = 0;

/**
 * The same environment on a new database of the same server. Each backend a benchmark starts gets its
 * own: sessions that one backend's load had started when it stopped are otherwise taken over by the next
 * backend's pipeline, whose media work then counts in that backend's load and idle memory.
 * Stop the original environment, not this one.
 */
export async function withFreshDatabase(environment: BenchEnvironment): Promise<BenchEnvironment> {
  const name = `bench_${++databases}`;
  const client = new pg.Client({ connectionString: environment.pg.url });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(environment.pg.url);
  url.pathname = `/${name}`;
  return { ...environment, env: { ...environment.env, DATABASE_URL: url.toString() } };
}

/** The name of a database withFreshDatabase made, from its URL; anything else is refused. */
export function ownDatabaseName(databaseUrl: string): string {
  const name = URL.canParse(databaseUrl) ? new URL(databaseUrl).pathname.slice(1) : "";
  if (!/^bench_\d+$/.test(name)) throw new Error(`not a database of withFreshDatabase: ${databaseUrl}`);
  return name;
}

/**
 * Drops the database of `own` (from withFreshDatabase) once its backend has stopped: the rows its load
 * left are otherwise vacuumed and analyzed by autovacuum while the next backend is measured.
 */
export async function dropOwnDatabase(own: BenchEnvironment): Promise<void> {
  const name = ownDatabaseName(own.env.DATABASE_URL ?? "");
  const client = new pg.Client({ connectionString: own.pg.url });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}

/**
 * BENCH_BACKEND_ENV: extra environment for the backend's processes alone, as space-separated NAME=VALUE
 * pairs (e.g. GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456), so that a setting tried on the
 * backend leaves the benchmark's own clients, and so its floor, as they were.
 */
export function backendEnv(setting: string | undefined): Record<string, string> {
  const pairs = (setting ?? "").split(" ").filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      if (at < 1) throw new Error(`BENCH_BACKEND_ENV: expected NAME=VALUE, got ${pair}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
