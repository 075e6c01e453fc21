/** Latency samples of one measured run, and what is printed about them. */
export interface RunResult {
  name: string;
  /** Completed operations. */
  ok: number;
  /** Failed operations (any status other than the expected ones, or a network error). */
  failed: number;
  /** Statuses of the failures, counted. */
  failures: Record<string, number>;
  seconds: number;
  /** Milliseconds per completed operation. */
  latencies: number[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export interface Summary {
  name: string;
  throughput: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  failures: Record<string, number>;
}

export function summarize(run: RunResult): Summary {
  const sorted = [...run.latencies].sort((a, b) => a - b);
  return {
    name: run.name,
    throughput: run.ok / run.seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    ok: run.ok,
    failed: run.failed,
    failures: run.failures,
  };
}

const pad = (text: string, width: number) => text.padEnd(width);
const num = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** A plain table: one row per run. */
export function table(rows: Summary[]): string {
  const header = `${pad("operation", 34)}${pad("ops/s", 10)}${pad("p50 ms", 9)}${pad("p99 ms", 9)}${pad("ok", 8)}failed`;
  const lines = rows.map(
    (r) =>
      `${pad(r.name, 34)}${pad(num(r.throughput), 10)}${pad(num(r.p50, 2), 9)}${pad(num(r.p99, 2), 9)}${pad(String(r.ok), 8)}${r.failed}${
        r.failed > 0 ? ` ${JSON.stringify(r.failures)}` : ""
      }`,
  );
  return [header, ...lines].join("\n");
}
