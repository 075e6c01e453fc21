/** Helpers shared by the runtime tests. */
import { createLogger, type Logger, type LogLevel } from "../src/log.js";

// The runtime cannot name @avatar/testkit (the testkit depends on the runtime), so it uses the file directly.
export { createTestDatabase, type TestDatabase } from "../../testkit/src/postgres.js";

export type LogRecord = Record<string, unknown> & { level: LogLevel; msg: string; time: string };

/** A logger whose JSON lines are kept in memory and can be read back as objects. */
export function collectingLogger(level: LogLevel = "debug"): {
  log: Logger;
  lines: string[];
  records(): LogRecord[];
} {
  const lines: string[] = [];
  const log = createLogger({ level, sink: (line) => lines.push(line) });
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as LogRecord) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `check` returns true; fails with `what` after `timeoutMs` (generous: machines are loaded). */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

export interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Whether `promise` settled while the event loop ran for `ms` (use only to show something did NOT happen). */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await sleep(ms);
  return settled;
}
