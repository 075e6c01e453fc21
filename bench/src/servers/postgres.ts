import { execFile, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@avatar/runtime";
import { commandLine, descendants } from "../proc.js";
import { StatementStats, statementStatsSettings } from "./postgres-statements.js";

const run = promisify(execFile);

/** Debian's PostgreSQL 15 (`apt-get install postgresql-15`); POSTGRES_BIN overrides the folder. */
export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? "/usr/lib/postgresql/15/bin";

export interface PostgresServer {
  url: string;
  version: string;
  /** Settings the server runs with, for the report. */
  settings: string;
  /** The postmaster and its backends. */
  pids(): number[];
  /**
   * The backends serving a client connection (their statements' answers and the WAL their commits
   * write), without the server's own processes (checkpointer, autovacuum...), whose writes belong to
   * whatever was written before.
   */
  clientPids(): number[];
  /** Each statement's cost, when the server was started to count them. */
  statements: StatementStats | undefined;
  stop(): Promise<void>;
}

export function postgresServerAvailable(): boolean {
  return existsSync(path.join(POSTGRES_BIN, "pg_ctl"));
}

/**
 * A throwaway Postgres server in a temporary folder on a free loopback port (as the `postgres` user when
 * run as root, which Postgres requires). fsync is off: the benchmark measures CPU and round trips, not
 * the disk, and the floor and the suite share the server and its settings.
 */
export async function startPostgresServer(options: { statements?: boolean } = {}): Promise<PostgresServer> {
  if (!postgresServerAvailable()) {
    throw new Error(
      `no Postgres server at ${POSTGRES_BIN} (apt-get install postgresql-15, or set POSTGRES_BIN)`,
    );
  }
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(path.join(tmpdir(), "avatar-bench-pg-"));
  chmodSync(dir, 0o755);
  if (asRoot) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const uid = Number(ids.stdout.trim());
    if (!Number.isInteger(uid)) throw new Error("running as root needs a `postgres` system user");
    chownSync(dir, uid, uid);
  }
  const as = (cmd: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", cmd, ...args]) : run(cmd, args);
  const data = path.join(dir, "data");
  const port = await freePort();
  const settings = [
    "fsync=off",
    "max_connections=300",
    ...(options.statements ? statementStatsSettings : []),
  ];
  await as(path.join(POSTGRES_BIN, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust"]);
  await as(path.join(POSTGRES_BIN, "pg_ctl"), [
    "-D",
    data,
    "-w",
    "-l",
    path.join(dir, "log"),
    "-o",
    [`-p ${port} -h 127.0.0.1 -k ${dir}`, ...settings.map((setting) => `-c ${setting}`)].join(" "),
    "start",
  ]);
  const { stdout } = await run(path.join(POSTGRES_BIN, "postgres"), ["--version"]);
  const pids = () => {
    const postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(postmaster) ? [postmaster, ...descendants(postmaster)] : [];
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const statements = options.statements ? new StatementStats(url) : undefined;
  await statements?.start();
  return {
    url,
    version: stdout.trim(),
    settings: settings.join(", "),
    pids,
    clientPids: () => pids().filter((pid) => isClientBackend(commandLine(pid))),
    statements,
    stop: async () => {
      await as(path.join(POSTGRES_BIN, "pg_ctl"), ["-D", data, "-m", "fast", "stop"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A backend's title (`postgres: USER DB HOST(PORT) STATE`) names its client; the server's own do not. */
export function isClientBackend(title: string): boolean {
  return /^postgres: \S+ \S+ (\S+\(\d+\)|\[local\])/.test(title);
}
