import { Worker } from "node:worker_threads";
import { ProviderError } from "../types.js";
import type { EspeakJob, EspeakSpeech } from "./espeak-engine.mjs";

/**
 * A small pool of worker threads running eSpeak NG (`espeak-worker.mjs`). A run takes a few hundred
 * milliseconds of CPU; on the main thread it would stall every other session's sockets and timers, so it
 * happens here.
 * Each worker takes one job at a time; jobs wait in order. Idle workers do not keep the process alive.
 */

export type { EspeakJob, EspeakSpeech };

interface Pending {
  job: EspeakJob;
  resolve(result: EspeakSpeech): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

const PROVIDER = "localEspeak";
const WORKER_URL = new URL("./espeak-worker.mjs", import.meta.url);

export class EspeakRunner {
  private readonly slots: Slot[] = [];
  private readonly waiting: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly size = 1) {}

  /** The job's audio (at the engine's sample rate) with its phoneme events. */
  run(job: EspeakJob): Promise<EspeakSpeech> {
    if (this.closed) return Promise.reject(new ProviderError(PROVIDER, "synthesizer closed", "unavailable"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts the workers now, so the first sentence does not pay for loading the module. */
  warmUp(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = () => new ProviderError(PROVIDER, "synthesizer closed", "unavailable");
    for (const pending of this.waiting.splice(0)) pending.reject(closed());
    const slots = this.slots.splice(0);
    // A running job would otherwise never settle: its slot is gone when the worker's exit arrives.
    for (const slot of slots) slot.current?.reject(closed());
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot =
        this.slots.find((s) => !s.current) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (!slot) return;
      const pending = this.waiting.shift() as Pending;
      slot.current = pending;
      slot.worker.ref();
      slot.worker.postMessage({ id: this.nextId++, job: pending.job });
    }
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), current: undefined };
    slot.worker.unref();
    slot.worker.on("message", (message: { speech?: EspeakSpeech; error?: string }) => {
      const pending = slot.current;
      const result = message.speech;
      if (!pending || (result === undefined && message.error === undefined)) return;
      slot.current = undefined;
      slot.worker.unref();
      if (result) pending.resolve(result);
      else pending.reject(new ProviderError(PROVIDER, `espeak-ng failed: ${message.error}`, "unavailable"));
      this.dispatch();
    });
    const fail = (err: unknown) => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      slot.current?.reject(
        new ProviderError(PROVIDER, `espeak worker stopped: ${describe(err)}`, "unavailable", { cause: err }),
      );
      slot.current = undefined;
      if (!this.closed) this.dispatch();
    };
    slot.worker.on("error", fail);
    slot.worker.on("exit", (code) => fail(`exit code ${code}`));
    this.slots.push(slot);
    return slot;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
