/** Small helpers for the bus tests: polling waits with generous bounds, gates, unique names. */
import { randomBytes } from "node:crypto";
import type { BusLogger } from "../src/logger.js";

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const str = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Lower-case letters and digits: valid in subjects, consumer names and bucket names. */
export function uniqueId(): string {
  return randomBytes(6).toString("hex");
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

/** Whether `promise` has settled after giving the event loop `ms` to run. */
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

export interface LogRecord {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps records in memory instead of printing them. */
export function recordingLogger(): { logger: BusLogger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  return { logger: (level, msg, fields) => records.push({ level, msg, fields }), records };
}
