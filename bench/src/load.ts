import type { RunResult } from "./stats.js";

/** One operation: resolves when it succeeded, rejects (with a short reason) when it did not. */
export type Operation = () => Promise<void>;

export class OperationFailed extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Runs `operation` from `concurrency` workers back to back for `seconds`, timing each completion. Work in
 * flight when the time is up is awaited but not counted.
 */
export async function runLoad(
  name: string,
  operation: Operation,
  options: { concurrency: number; seconds: number },
): Promise<RunResult> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  let failed = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;

  async function worker() {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await operation();
        const t1 = performance.now();
        if (t1 <= deadline) latencies.push(t1 - t0);
      } catch (err) {
        failed++;
        const reason =
          err instanceof OperationFailed ? err.reason : err instanceof Error ? err.message : String(err);
        failures[reason] = (failures[reason] ?? 0) + 1;
      }
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { name, ok: latencies.length, failed, failures, seconds: options.seconds, latencies };
}
