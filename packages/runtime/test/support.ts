/** Helpers shared by the runtime tests. */
import { createLogger, type Logger, type LogLevel } from "../src/log.js";

// The runtime cannot name @avatar/testkit (the testkit depends on the runtime), so it uses the file directly.
export { createTestDatabase, type TestDatabase } from "../../testkit/src/postgres.js";
export { type Gate, gate, settledWithin, sleep, waitFor } from "../../testkit/src/waits.js";

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
