import { parentPort } from "node:worker_threads";
import { type LookJob, runLookJob } from "./jobs.js";

/**
 * A look worker thread's loop: runs look jobs one at a time, in order, and sends each result back with
 * its buffers transferred. `pnpm build` bundles this file as `look-worker.mjs` beside a process's bundle;
 * from the sources, look-worker.mjs loads it through tsx.
 */
const port = parentPort;
if (!port) throw new Error("look-worker/thread.ts runs in a worker thread");
port.on("message", ({ id, job }: { id: number; job: LookJob }) => {
  const outcome = runLookJob(job);
  if (outcome.ok) port.postMessage({ id, value: outcome.value }, outcome.transfer);
  else port.postMessage({ id, failure: outcome.failure });
});
