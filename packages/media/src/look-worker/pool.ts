import { Worker } from "node:worker_threads";
import { type AvatarLook, AvatarLookSchema } from "@avatar/contracts/catalog";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Orientation, VideoQualityName } from "../frames.js";
import { LookParamsError, type LookRequest } from "../look/generate/vocabulary.js";
import { LookError } from "../look/look-error.js";
import type { LookRaster } from "../render/raster.js";
import type { JobFailure, LookJob } from "./jobs.js";

/**
 * Worker threads that draw looks: rasterizing a look for a frame size (0.4-2.5 s of CPU), rendering a
 * poster, generating a look, checking an uploaded one. The drawing library (Skia, some 24 MiB) is loaded
 * in these threads only, when the first job comes. Done on a service's main thread, each would stall every session's sockets,
 * timers and frames meanwhile. Jobs wait in order for a free thread; idle threads do not keep the process
 * alive. A thread that dies fails its job and is replaced on the next one.
 */

interface Pending {
  job: LookJob;
  transfer: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

// Beside this module in the sources; beside the process's bundle (built from thread.ts) after pnpm build.
const WORKER_URL = new URL("./look-worker.mjs", import.meta.url);

export class LookWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Pending[] = [];
  private nextId = 0;
  private closed = false;
  private jobs = 0;

  constructor(readonly size = 1) {}

  /** The look rasterized for one frame size; LookError when the look cannot be drawn. */
  rasterize(look: AvatarLook, lookKey: string, width: number, height: number): Promise<LookRaster> {
    const bytes = toBinary(AvatarLookSchema, look);
    return this.run({ type: "rasterize", look: bytes, lookKey, width, height }, [
      bytes.buffer as ArrayBuffer,
    ]) as Promise<LookRaster>;
  }

  /** The look at rest in a frame of this quality and orientation, as PNG bytes. */
  async poster(
    look: AvatarLook,
    lookKey: string,
    quality: VideoQualityName,
    orientation: Orientation,
  ): Promise<Buffer> {
    const bytes = toBinary(AvatarLookSchema, look);
    const png = (await this.run({ type: "poster", look: bytes, lookKey, quality, orientation }, [
      bytes.buffer as ArrayBuffer,
    ])) as Uint8Array;
    return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  }

  /** Whether the renderer can draw this look (decodeLook's checks); LookError when it cannot. */
  async check(look: AvatarLook): Promise<void> {
    const bytes = toBinary(AvatarLookSchema, look);
    await this.run({ type: "check", look: bytes }, [bytes.buffer as ArrayBuffer]);
  }

  /** generateLook's look; LookParamsError for choices it does not know. */
  async generate(request: LookRequest, scale?: number): Promise<AvatarLook> {
    const job: LookJob = { type: "generate", request: { ...request }, ...(scale ? { scale } : {}) };
    return fromBinary(AvatarLookSchema, (await this.run(job, [])) as Uint8Array);
  }

  /** Jobs run so far (finished or failed). */
  get jobsRun(): number {
    return this.jobs;
  }

  /** Fails running and waiting jobs and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    const closed = () => new Error("the look workers are closed");
    for (const pending of this.waiting.splice(0)) pending.reject(closed());
    const slots = this.slots.splice(0);
    for (const slot of slots) slot.current?.reject(closed());
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private run(job: LookJob, transfer: ArrayBuffer[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("the look workers are closed"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, transfer, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot =
        this.slots.find((s) => !s.current) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      const pending = slot ? this.waiting.shift() : undefined;
      if (!slot || !pending) return;
      slot.current = pending;
      slot.worker.ref();
      slot.worker.postMessage({ id: this.nextId++, job: pending.job }, pending.transfer);
    }
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), current: undefined };
    slot.worker.unref();
    slot.worker.on("message", (message: { value?: unknown; failure?: JobFailure }) => {
      const pending = slot.current;
      if (!pending) return;
      slot.current = undefined;
      slot.worker.unref();
      this.jobs++;
      if (message.failure) pending.reject(errorOf(message.failure));
      else pending.resolve(message.value);
      this.dispatch();
    });
    const fail = (err: unknown) => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      if (slot.current) {
        this.jobs++;
        slot.current.reject(new Error(`a look worker stopped: ${err instanceof Error ? err.message : err}`));
      }
      slot.current = undefined;
      if (!this.closed) this.dispatch();
    };
    slot.worker.on("error", fail);
    slot.worker.on("exit", (code) => fail(`exit code ${code}`));
    this.slots.push(slot);
    return slot;
  }
}

/** The error the job threw, rebuilt on this side of the thread boundary. */
function errorOf(failure: JobFailure): Error {
  const field = failure.field ?? "";
  // The errors' messages start with their field; the constructors add it again.
  const message = failure.message.startsWith(`${field}: `)
    ? failure.message.slice(field.length + 2)
    : failure.message;
  if (failure.kind === "look") return new LookError(field, message);
  if (failure.kind === "params") return new LookParamsError(field, message);
  return new Error(failure.message);
}

/** The process's look workers (one thread), used unless a caller brings its own pool. */
export const sharedLookWorkers = new LookWorkerPool(1);
