import { bytesFromSamples } from "../audio/pcm.js";
import { resamplePcm } from "../audio/stream-resampler.js";
import {
  SESSION_SAMPLE_RATE,
  type SpeechSynthesizer,
  type SpokenPhoneme,
  type SynthesisRequest,
  type TimedSpeech,
} from "../types.js";
import { EspeakRunner } from "./espeak-runner.js";
import { espeakVoiceFor } from "./espeak-voices.js";
import { splitSentences } from "./sentences.js";
import { numberSetting } from "./settings.js";

/**
 * A speech synthesizer that needs no network: eSpeak NG (Echogarden's build of its library,
 * `@echogarden/espeak-ng-emscripten`, GPL-3.0), run in worker processes. Text is spoken sentence by
 * sentence, so the first audio is ready after the first sentence; the next sentence is rendered while
 * the current one is consumed. Each sentence (with its closing pause) is one chunk: the engine's
 * 22050 Hz audio resampled to 24 kHz PCM, with its phonemes' timing (`synthesizeTimed`); `synthesize`
 * yields the same chunks' audio alone. The same text gives the same samples.
 *
 * Settings: `speed` (any variant's multiplier, 1 = eSpeak's 175 words per minute). The language picks
 * the eSpeak voice; the request's voiceId is not used (eSpeak has one voice per language here).
 * Aborting ends the iteration at once (quietly); a render already running in a worker finishes there
 * and is dropped.
 */

export interface LocalEspeakOptions {
  /** Worker processes rendering concurrently (default 1). */
  workers?: number;
  /** Longest piece of text rendered at once (default 250 characters). */
  maxSentenceChars?: number;
  /** How long after `prepare` the voice is prepared (default PREPARE_AFTER_MS). */
  prepareAfterMs?: number;
}

/**
 * A session's start is its busiest moment: its picture starts (the encoder, the first frames, the peer
 * connection) as it chooses this synthesizer. Preparing a voice then (a worker started, its engine made
 * and run once: ~1 s of CPU) made the picture's start stall longer. Measured in the browser test (its
 * first session; two cores shared with the browser), the suite's longest event-loop stall as the picture
 * started: 165-423 ms (mean 277, 9 runs) with the voice prepared at the session's start, 117-292 (mean
 * 166, 8 runs) with it prepared 5 s later or not at all. A first answer comes after the user has spoken,
 * seconds later; one that comes sooner (an opening text) makes its engine itself.
 */
export const PREPARE_AFTER_MS = 5000;

const BASE_WORDS_PER_MINUTE = 175;

export class LocalEspeakSynthesizer implements SpeechSynthesizer {
  readonly name = "localEspeak";
  private readonly runner: EspeakRunner;
  private readonly maxSentenceChars: number;
  private readonly prepareAfterMs: number;
  /** Voices whose preparation is due, with its timer. */
  private readonly preparing = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(options: LocalEspeakOptions = {}) {
    this.runner = new EspeakRunner(options.workers ?? 1);
    this.maxSentenceChars = options.maxSentenceChars ?? 250;
    this.prepareAfterMs = options.prepareAfterMs ?? PREPARE_AFTER_MS;
  }

  async *synthesize(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    for await (const speech of this.synthesizeTimed(request, signal)) yield speech.pcm;
  }

  /**
   * Sentence by sentence, each chunk's audio with its phonemes and their timing (eSpeak NG's phoneme
   * events, from the same run as the audio): what a renderer needs to shape the mouth to the text.
   */
  async *synthesizeTimed(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<TimedSpeech> {
    const sentences = splitSentences(request.text, this.maxSentenceChars);
    const voice = espeakVoiceFor(request.language);
    const wordsPerMinute = wordsPerMinuteFor(numberSetting(request.settings, "speed", 1));
    const render = (text: string) => {
      const speech = this.render(text, voice, wordsPerMinute);
      // A prefetched render nobody awaits (the consumer stopped) must not become an unhandled rejection.
      speech.catch(() => {});
      return speech;
    };
    let next = sentences.length > 0 && !signal?.aborted ? render(sentences[0] as string) : undefined;
    for (let i = 0; next; i++) {
      const current = next;
      next = i + 1 < sentences.length ? render(sentences[i + 1] as string) : undefined;
      const speech = await untilAborted(current, signal);
      if (speech === undefined) return;
      yield speech;
      if (signal?.aborted) return;
    }
  }

  /**
   * Starts the workers ahead of the first request, with the engine of the language's voice ready (the
   * default voice's without one), `prepareAfterMs` from now: a session calls it with its language as it
   * chooses this synthesizer, at its start.
   */
  prepare(language?: string): void {
    const voice = espeakVoiceFor(language);
    if (this.closed || this.preparing.has(voice)) return;
    const timer = setTimeout(() => {
      this.preparing.delete(voice);
      this.runner.prepare(voice);
    }, this.prepareAfterMs);
    timer.unref();
    this.preparing.set(voice, timer);
  }

  close(): Promise<void> {
    this.closed = true;
    for (const timer of this.preparing.values()) clearTimeout(timer);
    this.preparing.clear();
    return this.runner.close();
  }

  private async render(text: string, voice: string, wordsPerMinute: number): Promise<TimedSpeech> {
    const run = await this.runner.run({ text, voice, wordsPerMinute });
    const totalMs = (run.pcm.length / run.sampleRate) * 1000;
    return {
      pcm: resamplePcm(bytesFromSamples(run.pcm), run.sampleRate, SESSION_SAMPLE_RATE),
      phonemes: phonemeMarks(run.events, totalMs),
    };
  }
}

/** Phoneme events (starts) to marks with durations: each lasts until the next, the last until the end. */
export function phonemeMarks(events: { phoneme: string; atMs: number }[], totalMs: number): SpokenPhoneme[] {
  return events.map((e, i) => {
    const end = Math.min(totalMs, Math.max(e.atMs, events[i + 1]?.atMs ?? totalMs));
    return { phoneme: e.phoneme, startMs: e.atMs, durationMs: Math.max(0, end - e.atMs) };
  });
}

/** eSpeak's rate for a speed multiplier, within the range it speaks intelligibly. */
export function wordsPerMinuteFor(speed: number): number {
  return Math.round(Math.min(450, Math.max(80, BASE_WORDS_PER_MINUTE * speed)));
}

/** The promise's value, or undefined as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
