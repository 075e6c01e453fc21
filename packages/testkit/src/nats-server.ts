/**
 * A throwaway nats-server with JetStream for tests: 127.0.0.1, a free port, a temporary store dir.
 * `stop()` then `restart()` brings it back on the same port, which is how tests simulate an outage.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

export interface NatsServerStopOptions {
  /** Keep the JetStream store so the next `restart()` finds the file-backed streams again. */
  keepStore?: boolean;
}

export interface NatsServerHandle {
  url: string;
  port: number;
  /** Stops the server and, unless `keepStore` is set, deletes its store dir. */
  stop(options?: NatsServerStopOptions): Promise<void>;
  /** Starts the server again on the same port (stopping it first if it is running). */
  restart(): Promise<void>;
  /** The running server's process id (undefined while stopped). */
  pid(): number | undefined;
}

const FALLBACK_BINARY = "/usr/sbin/nats-server";
const READY_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
/**
 * As in production (deploy/overlays/dev/nats.yaml): a relayed event-socket message (up to 1 MiB plus
 * its frame) must fit in one NATS message, above nats-server's 1 MiB default.
 */
const SERVER_CONFIG = "max_payload: 8MB\n";
/**
 * Go's runtime settings nats-server runs with here, as in production (deploy/overlays/dev/nats.yaml); a
 * value of the environment's own wins.
 *
 * GOGC=400: Go's garbage collector runs when the heap has grown by 400 % instead of 100 %. At 1,000 LITE
 * sessions (64 MB/s of audio through the server) that took the server's CPU from 24-25 % to 15-18 % of a
 * core in every run, and the chunk round trip's p99 from a median of 48 ms (32-54, five runs) to 31 ms
 * (26-38, eight runs), for about 20 MiB more resident memory (pnpm bench:lite, 2026-11-26). A rate-limit
 * compare-and-set's p99 did not move measurably.
 *
 * GODEBUG=madvdontneed=0: the memory Go's scavenger hands back is released with MADV_FREE instead of
 * MADV_DONTNEED, so the pages the server takes again (it does, at every cycle of that heap) are not
 * faulted in anew; the kernel reclaims them only when it needs memory. At 1,000 LITE sessions the server
 * took 2.86 page faults per chunk with Go's default and 0.00 with this (pnpm bench:lite, 2026-12-07), on
 * a host where each costs ~16 µs; its resident memory reads higher (58 -> 76-173 MiB), since pages freed
 * lazily count until they are reclaimed.
 */
export const NATS_SERVER_GO_ENV = { GOGC: "400", GODEBUG: "madvdontneed=0" } as const;

/** The Go settings nats-server runs with here: the environment's, else NATS_SERVER_GO_ENV's. */
export const natsServerGoEnv = (): Record<keyof typeof NATS_SERVER_GO_ENV, string> => ({
  GOGC: process.env.GOGC || NATS_SERVER_GO_ENV.GOGC,
  GODEBUG: process.env.GODEBUG || NATS_SERVER_GO_ENV.GODEBUG,
});

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** NATS_SERVER_BIN, else `nats-server` on PATH, else /usr/sbin/nats-server; null when none is executable. */
export function findNatsServerBinary(): string | null {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, "nats-server"))) return join(dir, "nats-server");
  }
  return isExecutable(FALLBACK_BINARY) ? FALLBACK_BINARY : null;
}

/**
 * Whether `what` (tests that need a NATS server) can run: without nats-server they are skipped with a
 * warning, and under CI=true that is a failure instead.
 */
export function natsServerAvailable(what: string): boolean {
  const found = findNatsServerBinary() !== null;
  if (!found && process.env.CI === "true") {
    throw new Error(`nats-server is required in CI (${what}; install it or set NATS_SERVER_BIN)`);
  }
  if (!found) console.warn(`nats-server not found: skipping ${what}`);
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Spawns the server and resolves once it logged "Server is ready" and accepts TCP connections. */
async function launch(binary: string, port: number, storeDir: string): Promise<ChildProcess> {
  const configFile = join(storeDir, "nats.conf");
  mkdirSync(storeDir, { recursive: true });
  writeFileSync(configFile, SERVER_CONFIG);
  const args = ["-c", configFile, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir];
  const child = spawn(binary, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...natsServerGoEnv() },
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));

  let log = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`nats-server not ready after ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
      if (log.includes("Server is ready")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with code ${code}`));
    });
  });
  try {
    await ready;
    while (!(await canConnect(port))) await new Promise((r) => setTimeout(r, 20));
    return child;
  } catch (err) {
    child.kill("SIGKILL");
    await waitForExit(child);
    throw new Error(`${(err as Error).message}\n${log}`);
  }
}

async function terminate(child: ChildProcess): Promise<void> {
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await waitForExit(child);
  clearTimeout(timer);
}

export async function startNatsServer(): Promise<NatsServerHandle> {
  const binary = findNatsServerBinary();
  if (!binary) throw new Error("nats-server not found (set NATS_SERVER_BIN or install nats-server)");

  const storeDir = mkdtempSync(join(tmpdir(), "nats-test-"));
  let port = 0;
  let child: ChildProcess | null = null;
  // A free port can be taken by someone else before the server binds it: try a few.
  for (let attempt = 1; child === null; attempt++) {
    port = await freePort();
    try {
      child = await launch(binary, port, storeDir);
    } catch (err) {
      if (attempt >= 3) {
        rmSync(storeDir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  const stop = async (options: NatsServerStopOptions = {}) => {
    if (child) await terminate(child);
    child = null;
    if (!options.keepStore) rmSync(storeDir, { recursive: true, force: true });
  };

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop,
    async restart() {
      await stop({ keepStore: true });
      mkdirSync(storeDir, { recursive: true });
      child = await launch(binary, port, storeDir);
    },
    pid: () => child?.pid,
  };
}
