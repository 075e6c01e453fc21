import os from "node:os";
import { startCluster } from "./cluster.js";
import { formatReport } from "./report.js";
import { CHAOS_TIMING, scenarios, TEST_TIMING } from "./scenarios.js";

/**
 * `pnpm chaos`: starts the whole service as separate processes on a Postgres and a NATS of its own,
 * injects each fault in turn and prints one line per fault (what was injected, requests answered and
 * failed, sessions that survived or ended, minutes charged against expected, messages lost).
 * `pnpm chaos --quick` uses the fault tests' shorter outages.
 */
const quick = process.argv.includes("--quick");
const timing = quick ? TEST_TIMING : CHAOS_TIMING;
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(
  `pnpm chaos ${new Date().toISOString()} on ${os.hostname()} (${os.cpus().length} x ${cpu}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}), node ${process.version}${quick ? ", --quick" : ""}`,
);
const began = Date.now();
const cluster = await startCluster();
console.log(`cluster of ${cluster.topology.processes.length} processes ready in ${Date.now() - began} ms`);
let failed = false;
try {
  for (const scenario of scenarios) {
    try {
      console.log(formatReport(await scenario(cluster, timing)));
    } catch (err) {
      failed = true;
      console.log(`${scenario.name}: could not run: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
} finally {
  await cluster.stop();
}
console.log(`done in ${Math.round((Date.now() - began) / 1000)} s`);
process.exit(failed ? 1 : 0);
