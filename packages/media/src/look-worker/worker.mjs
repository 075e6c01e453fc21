// A look worker thread: runs look jobs (look-worker/jobs.ts) one at a time, in order, and sends each
// result back with its buffers transferred. The jobs are TypeScript: tsx compiles them here (a worker
// does not inherit the parent's loader on Node 20).
import { parentPort } from "node:worker_threads";

(await import("tsx/esm/api")).register();
const { runLookJob } = await import("./jobs.ts");

parentPort.on("message", ({ id, job }) => {
  const outcome = runLookJob(job);
  if (outcome.ok) parentPort.postMessage({ id, value: outcome.value }, outcome.transfer);
  else parentPort.postMessage({ id, failure: outcome.failure });
});
