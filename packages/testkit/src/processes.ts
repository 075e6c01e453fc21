import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import path from "node:path";
import { nodeFlagsFor } from "@avatar/build/node-flags";

/** The repository root (processes run from there, as `pnpm start` does). */
export const repoRoot = path.resolve(import.meta.dirname, "../../..");

export interface SpawnedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything the process wrote, stdout and stderr interleaved. */
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

/** The bundle `pnpm build` makes of an entry point: `services/catalog/src/main.ts` -> `services/catalog/dist/main.js`. */
export function builtEntry(entry: string): string {
  return entry.replace(/\/src\/main\.ts$/, "/dist/main.js");
}

/**
 * Runs one of the suite's entry points as its own Node process: a source file (`services/catalog/src/main.ts`)
 * through tsx, a built one (`services/catalog/dist/main.js`) as it is, with the flags every process's
 * `node` runs with (nodeFlagsFor). With TOPOLOGY_LOG_DIR set, what
 * each process writes is also appended to `<dir>/<name>.log` (kept across restarts, for a flaky run).
 * With `ipc`, the child has Node's IPC channel (`child.send`, `process.send`).
 */
export function spawnEntry(
  name: string,
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  options: { ipc?: boolean } = {},
): SpawnedProcess {
  const args = [
    ...nodeFlagsFor(entry),
    ...nodeArgs,
    ...(entry.endsWith(".ts") ? ["--import", "tsx", entry] : [entry]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  return supervised(name, child, { logDir: process.env.TOPOLOGY_LOG_DIR });
}

/**
 * A child already spawned (its stdout and stderr piped) as a SpawnedProcess: what it writes is collected
 * (and appended to `<logDir>/<name>.log` when given), and `stop` signals it, or with `group` its whole
 * process group (a child spawned `detached`, e.g. `pnpm start`, whose shell and node go with it).
 */
export function supervised(
  name: string,
  child: ChildProcess,
  options: { logDir?: string | undefined; group?: boolean; graceMs?: number } = {},
): SpawnedProcess {
  let out = "";
  const { logDir } = options;
  const tee = (d: Buffer) => {
    out += d.toString();
    if (logDir) appendFileSync(`${logDir}/${name}.log`, d);
  };
  child.stdout?.on("data", tee);
  child.stderr?.on("data", tee);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const signal = (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (options.group && child.pid !== undefined) process.kill(-child.pid, sig);
    else child.kill(sig);
  };
  return {
    name,
    child,
    output: () => out,
    stop: async (graceMs = options.graceMs ?? 15_000) => {
      const deadline = Date.now() + graceMs;
      if (child.exitCode === null && child.signalCode === null) {
        signal("SIGTERM");
        const timer = setTimeout(() => signal("SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // The leader (pnpm) may go before what it started (node, its embedded Postgres) has finished; a
      // caller that removes their files next must find them stopped.
      if (options.group && child.pid !== undefined) await groupGone(child.pid, deadline);
      return child.exitCode;
    },
  };
}

/** Waits until no process of group `pgid` is left, killing what is still there at `deadline`. */
async function groupGone(pgid: number, deadline: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  };
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!alive()) return;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // gone in between
  }
  for (let i = 0; i < 40 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
}

/** Polls `url` every `pollMs` until it answers 200 (or the process exits, or the time runs out). */
export async function waitForReady(
  url: string,
  proc: SpawnedProcess,
  timeoutMs = 30_000,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited early:\n${proc.output()}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new Error(`${proc.name} not ready at ${url} after ${timeoutMs} ms:\n${proc.output()}`);
}
