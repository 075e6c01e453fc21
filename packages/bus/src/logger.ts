export type BusLogLevel = "info" | "warn" | "error";

/** Structured log sink; the bus reports what it cannot throw to a caller (handler failures, reconnects). */
export type BusLogger = (level: BusLogLevel, msg: string, fields?: Record<string, unknown>) => void;

/** Default sink: warnings and errors as JSON lines on stderr; info is dropped. */
export const stderrLogger: BusLogger = (level, msg, fields) => {
  if (level === "info") return;
  process.stderr.write(`${JSON.stringify({ level, component: "bus", msg, ...fields })}\n`);
};

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
