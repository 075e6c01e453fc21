/** Types of espeak-engine.mjs (eSpeak NG's library API). */

export interface EspeakEngine {
  set_voice(name: string, language?: string): number;
  set_rate(wordsPerMinute: number): void;
  get_samplerate(): number;
}

export interface EspeakJob {
  text: string;
  /** eSpeak NG voice name or language, e.g. "en-us". */
  voice: string;
  wordsPerMinute: number;
}

/** A run: 16-bit mono samples and each phoneme's start (ms from the start of the audio). */
export interface EspeakSpeech {
  pcm: Int16Array;
  sampleRate: number;
  events: { phoneme: string; atMs: number }[];
}

/** An engine for one voice whose every run is a fresh engine's (espeak-engine.mjs). */
export interface ResettableEngine {
  readonly voice: string;
  /** A run allocated (a text longer than RESETTABLE_TEXT_BYTES): it can no longer be reset. */
  readonly spent: boolean;
  /** Throws for another voice, or once spent. */
  speak(job: EspeakJob): EspeakSpeech;
}

export const RESETTABLE_TEXT_BYTES: number;
export function createEngine(): Promise<EspeakEngine>;
export function createResettableEngine(voice: string): Promise<ResettableEngine | undefined>;
export function selectVoice(engine: EspeakEngine, voice: string): boolean;
export function engineText(text: string): string;
export function speak(engine: EspeakEngine, job: EspeakJob): EspeakSpeech;
