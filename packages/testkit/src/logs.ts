import { createLogger, type Logger, type LogLevel } from "@avatar/runtime";

export type LogRecord = Record<string, unknown> & { level: LogLevel; msg: string; time: string };

/** A logger whose JSON lines are kept in memory, to read back as text or as objects. */
export function collectingLogger(level: LogLevel = "debug"): {
  log: Logger;
  lines: string[];
  records(): LogRecord[];
} {
  const lines: string[] = [];
  const log = createLogger({ level, sink: (line) => lines.push(line) });
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as LogRecord) };
}
