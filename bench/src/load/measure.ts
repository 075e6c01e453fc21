import { cpuReading, growthReading, pageFaults, writeCalls } from "../proc.js";
import { drive } from "./drive.js";
import type { LoadResult, Scenario } from "./scenario.js";

/**
 * One measured run of a scenario: its warm-up first (not measured), then the run, with the CPU
 * milliseconds, the write system calls and the page faults each named group of processes spent per
 * operation during it (each group's pids are read again at the end: Postgres backends come and go).
 * `beforeRun` runs between the warm-up and the run (e.g. to forget Postgres's statement counts).
 */
export async function measureLoad(
  scenario: Scenario,
  groups: Record<string, () => number[]>,
  beforeRun?: () => Promise<void>,
): Promise<{
  result: LoadResult;
  cpuMsPerOp: Record<string, number>;
  writesPerOp: Record<string, number>;
  faultsPerOp: Record<string, number>;
}> {
  if (scenario.warmupSeconds > 0) {
    await drive({ ...scenario, seconds: scenario.warmupSeconds, warmupSeconds: 0 });
  }
  await beforeRun?.();
  const readings = Object.entries(groups).map(
    ([name, pids]) =>
      [name, cpuReading(pids), growthReading(pids, writeCalls), growthReading(pids, pageFaults)] as const,
  );
  const result = await drive({ ...scenario, warmupSeconds: 0 });
  const ops = result.opsPerSecond * scenario.seconds;
  return {
    result,
    cpuMsPerOp: Object.fromEntries(readings.map(([name, cpu]) => [name, (cpu() * 1000) / ops])),
    writesPerOp: Object.fromEntries(readings.map(([name, , writes]) => [name, writes() / ops])),
    faultsPerOp: Object.fromEntries(readings.map(([name, , , faults]) => [name, faults() / ops])),
  };
}
