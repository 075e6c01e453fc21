import type { KeyObject } from "node:crypto";
import { Worker } from "node:worker_threads";
import type { Logger } from "@avatar/runtime";
import { signatureAlgorithm } from "../signature-algorithms.js";
import { type Presignature, signPresigned } from "./p256.js";

const es256 = signatureAlgorithm("ES256");

// Beside this module in the sources; beside the process's bundle (built from thread.ts) after pnpm build.
const WORKER_URL = new URL("./presign-worker.mjs", import.meta.url);

/**
 * The most presignatures asked for at once: ~2 ms of the thread's CPU. A whole pool at once (~9 ms for
 * 512) took a core away from the mint's thread, Postgres or the clients long enough to show in the p99.
 */
const MAX_BATCH = 128;

/** A thread with a full pool and no signature this long is stopped: a resting thread holds ~19 MiB. */
const IDLE_MS = 10_000;

export interface PresignerOptions {
  /** Presignatures kept ready; the thread tops the pool up in batches as they are used. */
  poolSize: number;
  log: Logger;
  /** The thread's module (tests start one that fails). */
  workerUrl?: URL;
  /** How long a thread with a full pool waits for a signature before it stops (default 10 s). */
  idleMs?: number;
}

/**
 * ES256 signatures for one key, most of their work done ahead on a thread of their own (p256.ts): a
 * mint's thread then only hashes its token and does one multiplication, where crypto.sign costs it
 * 20-30 µs. The thread starts at the first signature, tops the pool up as it empties, and stops when
 * the pool has been full and unused for a while (the presignatures stay; the next refill starts another).
 * Whenever the pool is empty (a burst faster than the thread, or before its first batch) and after a
 * thread failed, tokens are signed by crypto.sign on the caller's thread, so a signature never waits.
 */
export class Es256Presigner {
  private readonly pool: Presignature[] = [];
  private readonly batch: number;
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private asked = false;
  private failed = false;
  private closed = false;
  /** Signatures made from a presignature, and by crypto.sign. */
  readonly counts = { presigned: 0, direct: 0 };

  constructor(
    private readonly key: KeyObject,
    private readonly options: PresignerOptions,
  ) {
    this.batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(options.poolSize / 2)));
  }

  /** r || s, as a JWS ES256 signature is written. */
  sign(input: Buffer): Buffer {
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = undefined;
    }
    const presignature = this.pool.pop();
    this.refill();
    const signature = presignature && signPresigned(presignature, input);
    if (signature) {
      this.counts.presigned++;
      return signature;
    }
    this.counts.direct++;
    return es256.sign(input, this.key);
  }

  /** Presignatures ready now. */
  get ready(): number {
    return this.pool.length;
  }

  /** Whether a presigning thread runs now. */
  get threadRunning(): boolean {
    return this.worker !== undefined;
  }

  /** Stops the thread and forgets the presignatures; later signatures are crypto.sign's. */
  async close(): Promise<void> {
    this.closed = true;
    this.pool.length = 0;
    await this.stopThread();
  }

  /** Asks for a batch when a batch's room is free and none is on its way; rests the thread when full. */
  private refill(): void {
    if (this.asked || this.failed || this.closed) return;
    if (this.pool.length > this.options.poolSize - this.batch) {
      if (this.pool.length >= this.options.poolSize && this.worker && !this.idle) {
        this.idle = setTimeout(() => void this.stopThread(), this.options.idleMs ?? IDLE_MS).unref();
      }
      return;
    }
    this.asked = true;
    this.worker ??= this.spawn();
    this.worker.postMessage(this.batch);
  }

  private async stopThread(): Promise<void> {
    clearTimeout(this.idle);
    this.idle = undefined;
    const worker = this.worker;
    this.worker = undefined;
    this.asked = false;
    await worker?.terminate();
  }

  private spawn(): Worker {
    const worker = new Worker(this.options.workerUrl ?? WORKER_URL, { workerData: { key: this.key } });
    worker.unref();
    worker.on("message", (batch: Presignature[]) => {
      if (worker !== this.worker) return;
      this.asked = false;
      this.pool.push(...batch);
      this.refill();
    });
    // A thread stopped on purpose is no longer this.worker by the time it exits.
    const fail = (why: unknown) => {
      if (worker !== this.worker) return;
      this.failed = true;
      this.worker = undefined;
      this.options.log.warn("the presigning thread stopped; session tokens are signed on the main thread", {
        why: why instanceof Error ? why.message : String(why),
      });
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(`exit code ${code}`));
    return worker;
  }
}
