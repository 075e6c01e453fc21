import { Worker } from "node:worker_threads";
import { ProviderError } from "../types.js";

/**
 * A small pool of worker threads running eSpeak-NG. A run takes a few hundred milliseconds of CPU;
 * on the main thread it would stall every other session's sockets and timers, so it happens here.
 * Each worker takes one job at a time; jobs wait in order. Idle workers do not keep the process alive.
 */

export interface EspeakJob {
  text: string;
  /** eSpeak-NG voice name, e.g. "en-us". */
  voice: string;
  wordsPerMinute: number;
}

/** A timed run: 16-bit mono samples and each phoneme's start (ms from the start of the audio). */
export interface TimedRun {
  pcm: Int16Array;
  sampleRate: number;
  events: { phoneme: string; atMs: number }[];
}

interface Pending {
  job: EspeakJob;
  timed: boolean;
  resolve(result: Uint8Array | TimedRun): void;
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

  /** The WAV file eSpeak-NG writes for the job's text. */
  run(job: EspeakJob): Promise<Uint8Array> {
    return this.enqueue(job, false) as Promise<Uint8Array>;
  }

  /** The job's audio with its phoneme events (eSpeak's library API, in the same worker). */
  runTimed(job: EspeakJob): Promise<TimedRun> {
    return this.enqueue(job, true) as Promise<TimedRun>;
  }

  private enqueue(job: EspeakJob, timed: boolean): Promise<Uint8Array | TimedRun> {
    if (this.closed) return Promise.reject(new ProviderError(PROVIDER, "synthesizer closed", "unavailable"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, timed, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts the workers now, so the first sentence does not pay for loading the module. */
  warmUp(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.waiting.splice(0))
      pending.reject(new ProviderError(PROVIDER, "synthesizer closed", "unavailable"));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot =
        this.slots.find((s) => !s.current) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (!slot) return;
      const pending = this.waiting.shift() as Pending;
      slot.current = pending;
      slot.worker.ref();
      const { text, voice, wordsPerMinute } = pending.job;
      slot.worker.postMessage({
        id: this.nextId++,
        options: ["-v", voice, "-s", String(Math.round(wordsPerMinute))],
        text: sanitize(text),
        ...(pending.timed ? { timed: { voice, wordsPerMinute } } : {}),
      });
    }
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), current: undefined };
    slot.worker.unref();
    slot.worker.on("message", (message: { wav?: Uint8Array; timed?: TimedRun; error?: string }) => {
      const pending = slot.current;
      const result = message.wav ?? message.timed;
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

/** Control characters (a NUL would cut the C string short) become spaces. */
function sanitize(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f]/g, " ");
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
