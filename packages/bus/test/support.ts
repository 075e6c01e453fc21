/** Small helpers for the bus tests: polling waits with generous bounds, gates, unique names. */
import { randomBytes } from "node:crypto";
import type { BusLogger } from "../src/logger.js";

export { type Gate, gate, settledWithin, sleep, waitFor } from "../../testkit/src/waits.js";

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const str = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Lower-case letters and digits: valid in subjects, consumer names and bucket names. */
export function uniqueId(): string {
  return randomBytes(6).toString("hex");
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
