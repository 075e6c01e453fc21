import { spawnSync } from "node:child_process";

/**
 * Runs `script` (an ES module, TypeScript allowed) in a child node with a small young generation, so that
 * garbage collections come often, and answers how it ended. Node 20 has deadlocked for good when a
 * collection destroyed a crypto job whose key the main thread held; a child with a time limit turns such a
 * hang into a failure instead of a CI run that never ends.
 */
export function runUnderFrequentCollections(
  script: string,
  timeoutMs = 40_000,
): { hung: boolean; status: number | null; stderr: string } {
  const run = spawnSync(
    process.execPath,
    ["--max-semi-space-size=1", "--import", "tsx", "--input-type=module", "-e", script],
    { timeout: timeoutMs, encoding: "utf8" },
  );
  // Only the time limit means a hang; a child that crashed (a signal of its own) fails on its status.
  const timedOut = (run.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  return { hung: timedOut, status: run.status, stderr: run.stderr };
}
