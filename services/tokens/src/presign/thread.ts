import type { KeyObject } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import { presignatures, privateScalar } from "./p256.js";

/**
 * A presigning thread for one key (`workerData.key`): each message is a count, answered with that many
 * presignatures. `pnpm build` bundles this file as `presign-worker.mjs` beside a process's bundle; from
 * the sources, presign-worker.mjs loads it through tsx.
 */
const port = parentPort;
if (!port) throw new Error("presign/thread.ts runs in a worker thread");
const d = privateScalar((workerData as { key: KeyObject }).key);
port.on("message", (count: number) => port.postMessage(presignatures(d, count)));
