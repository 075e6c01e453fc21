import { activeTraceIds } from "./tracing/spans.js";

/**
 * Structured JSON logs, one object per line, carrying, when tracing is on, the active span's `trace_id`
 * and `span_id`. A line about a call carries its `request_id` as a field (request-id.ts): nothing keeps
 * it for the code in between (an AsyncLocalStorage did, until 2026-11-28: on Node 20 its promise hooks
 * ran for every promise of the process, about a tenth of a one-process mint's CPU).
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string) => void;

export interface LoggerOptions {
  level?: LogLevel;
  sink?: LogSink;
  fields?: LogFields;
}

function serializeError(err: unknown): unknown {
  if (err instanceof Error) {
    return { name: err.name, message: err.message, stack: err.stack };
  }
  return err;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = rank[options.level ?? "info"];
  const sink: LogSink = options.sink ?? ((line) => process.stdout.write(`${line}\n`));
  const base = options.fields ?? {};

  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (rank[level] < min) return;
    const entry: LogFields = { time: new Date().toISOString(), level, msg, ...base };
    const traced = activeTraceIds();
    if (traced) Object.assign(entry, traced);
    if (fields) {
      for (const [k, v] of Object.entries(fields)) entry[k] = k === "err" ? serializeError(v) : v;
    }
    sink(JSON.stringify(entry));
  };

  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/** A logger that writes nothing (for tests that do not read logs). */
export const silentLogger: Logger = createLogger({ sink: () => {} });
