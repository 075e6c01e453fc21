import { type ChildProcess, fork } from "node:child_process";
import { getPriority, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { ProviderError } from "../types.js";
import type { EspeakJob, EspeakSpeech } from "./espeak-engine.mjs";

/**
 * A small pool of worker processes running eSpeak NG (`espeak-worker.mjs`). A sentence costs 5-15 ms of
 * CPU on a worker's engine once V8 has compiled it, but hundreds of ms (with as much again on V8's
 * background threads) on an engine's first runs, and in a thread of the service's own process that was
 * most of a core of two as an answer began: the session's frames (renderer, video encoders) waited for a
 * core, a frozen picture. In a process of its own it runs at a lower priority (`SYNTHESIS_NICENESS`):
 * speech is made ahead of playback, the frames are due now.
 * Each worker takes one job at a time; jobs wait in order. Idle workers do not keep the process alive.
 */

export type { EspeakJob, EspeakSpeech };

interface Pending {
  job: EspeakJob;
  resolve(result: EspeakSpeech): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: ChildProcess;
  current: Pending | undefined;
}

const PROVIDER = "localEspeak";
const WORKER_PATH = fileURLToPath(new URL("./espeak-worker.mjs", import.meta.url));
/** How much lower than the service a worker runs (nice): below the frames, well above idle. */
export const SYNTHESIS_NICENESS = 5;

export class EspeakRunner {
  private readonly slots: Slot[] = [];
  private readonly waiting: Pending[] = [];
  private nextId = 0;
  private closed = false;
  /**
   * Voices the workers were asked to prepare (forgotten when a worker is replaced). A hint only: a
   * worker keeps the engines of its two most recent voices, and makes a dropped one again when asked.
   */
  private readonly prepared = new Set<string>();

  constructor(private readonly size = 1) {}

  /** The job's audio (at the engine's sample rate) with its phoneme events. */
  run(job: EspeakJob): Promise<EspeakSpeech> {
    if (this.closed) return Promise.reject(new ProviderError(PROVIDER, "synthesizer closed", "unavailable"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts the workers now if they are not running, and has each prepare `voice`'s engine (made and
   * spoken once), once per voice, so a first sentence in that voice pays for neither.
   */
  prepare(voice: string): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
    if (this.closed || this.prepared.has(voice)) return;
    this.prepared.add(voice);
    for (const slot of this.slots) slot.worker.send({ prepare: voice });
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = () => new ProviderError(PROVIDER, "synthesizer closed", "unavailable");
    for (const pending of this.waiting.splice(0)) pending.reject(closed());
    const slots = this.slots.splice(0);
    // A running job would otherwise never settle: its slot is gone when the worker's exit arrives.
    for (const slot of slots) slot.current?.reject(closed());
    await Promise.all(slots.map((slot) => stop(slot.worker)));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot =
        this.slots.find((s) => !s.current) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (!slot) return;
      const pending = this.waiting.shift() as Pending;
      slot.current = pending;
      hold(slot.worker, true);
      slot.worker.send({ id: this.nextId++, job: pending.job });
    }
  }

  private spawn(): Slot {
    // Plain JavaScript, run without the service's loaders; messages in V8's serialization (the samples
    // cross as an Int16Array, not as JSON numbers).
    const worker = fork(WORKER_PATH, [], {
      execArgv: [],
      serialization: "advanced",
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    const slot: Slot = { worker, current: undefined };
    try {
      if (worker.pid !== undefined) setPriority(worker.pid, Math.min(19, getPriority() + SYNTHESIS_NICENESS));
    } catch {} // a platform without priorities: it runs at the service's
    hold(worker, false);
    worker.on("message", (message: { speech?: EspeakSpeech; error?: string }) => {
      const pending = slot.current;
      const result = message.speech;
      if (!pending || (result === undefined && message.error === undefined)) return;
      slot.current = undefined;
      hold(worker, false);
      if (result) pending.resolve(result);
      else pending.reject(new ProviderError(PROVIDER, `espeak-ng failed: ${message.error}`, "unavailable"));
      this.dispatch();
    });
    const fail = (err: unknown) => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      this.prepared.clear();
      slot.current?.reject(
        new ProviderError(PROVIDER, `espeak worker stopped: ${describe(err)}`, "unavailable", { cause: err }),
      );
      slot.current = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on("error", fail);
    worker.on("exit", (code, signal) => fail(signal ? `killed by ${signal}` : `exit code ${code}`));
    this.slots.push(slot);
    return slot;
  }
}

/** Whether the worker keeps this process alive: while it has a job. */
function hold(worker: ChildProcess, busy: boolean): void {
  if (busy) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
}

/** Ends the worker; resolves once it has exited (held meanwhile: an idle worker is unreferenced). */
async function stop(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once("exit", resolve));
  hold(worker, true);
  worker.kill();
  await exited;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
