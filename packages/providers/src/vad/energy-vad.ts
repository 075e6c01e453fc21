/**
 * A voice-activity detector from frame energy, for the session's PCM (16-bit, mono, 24 kHz by default).
 *
 * Each frame's level is measured in dBFS and compared with an estimate of the background noise: a frame
 * counts as speech when it is `thresholdDb` above the noise floor and louder than `minSpeechLevelDb`.
 * Speech starts after `startMs` of consecutive speech frames and ends after `hangoverMs` of consecutive
 * non-speech frames, so short clicks do not start a segment and the pauses between words do not end one.
 *
 * The noise floor falls at once to any quieter frame and rises slowly (time constant `floorRiseMs`)
 * toward louder ones, in speech too: steady noise is absorbed into the floor after a few seconds,
 * while speech, which keeps dipping between syllables, stays above it. The floor starts at the first
 * frame's level: the stream is assumed to begin with background sound, not speech.
 *
 * Events carry the sample offset (from the first sample processed) where speech really started or
 * ended, at frame resolution: the start of the first frame of the run that triggered the change. They
 * are reported when the run is long enough, i.e. `startMs` or `hangoverMs` after that offset.
 */
import { SampleAligner } from "../audio/pcm.js";
import { SESSION_SAMPLE_RATE } from "../types.js";

export interface EnergyVadOptions {
  sampleRate?: number;
  /** Analysis frame length. Default 10 ms. */
  frameMs?: number;
  /** How far above the noise floor a speech frame is. Default 10 dB. */
  thresholdDb?: number;
  /** Frames quieter than this never count as speech. Default -55 dBFS. */
  minSpeechLevelDb?: number;
  /** Consecutive speech needed to start a segment. Default 100 ms. */
  startMs?: number;
  /** Consecutive silence needed to end a segment (hangover). Default 500 ms. */
  hangoverMs?: number;
  /** Time constant of the noise floor's rise toward louder background. Default 2000 ms. */
  floorRiseMs?: number;
}

export type VadEvent = { type: "speech_started" | "speech_ended"; sampleOffset: number };

/** The level of silence (digital zero) in dBFS, so the logarithm stays finite. */
const SILENCE_DB = -100;
const FULL_SCALE_SQUARED = 32768 * 32768;

export class EnergyVad {
  readonly frameSamples: number;
  private readonly thresholdDb: number;
  private readonly minSpeechLevelDb: number;
  private readonly startFrames: number;
  private readonly endFrames: number;
  /** The share of the distance to a louder frame the floor rises by per frame. */
  private readonly riseFactor: number;
  private readonly aligner = new SampleAligner();
  private floorDb: number | undefined;
  private frames = 0;
  private filled = 0;
  private sumSquares = 0;
  private inSpeech = false;
  /** Consecutive frames that disagree with the current state, and where that run began. */
  private run = 0;
  private runStart = 0;

  constructor(options: EnergyVadOptions = {}) {
    const sampleRate = options.sampleRate ?? SESSION_SAMPLE_RATE;
    const frameMs = options.frameMs ?? 10;
    this.frameSamples = Math.round((sampleRate * frameMs) / 1000);
    if (this.frameSamples < 1) throw new RangeError("frame too short");
    this.thresholdDb = options.thresholdDb ?? 10;
    this.minSpeechLevelDb = options.minSpeechLevelDb ?? -55;
    this.startFrames = Math.max(1, Math.ceil((options.startMs ?? 100) / frameMs));
    this.endFrames = Math.max(1, Math.ceil((options.hangoverMs ?? 500) / frameMs));
    this.riseFactor = 1 - Math.exp(-frameMs / (options.floorRiseMs ?? 2000));
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  /** The current noise-floor estimate in dBFS (undefined before the first frame). */
  get noiseFloorDb(): number | undefined {
    return this.floorDb;
  }

  /** Samples processed so far. */
  get position(): number {
    return this.frames * this.frameSamples + this.filled;
  }

  /** Analyses more audio (any length; a split sample is completed by the next call). */
  process(pcm: Uint8Array): VadEvent[] {
    const bytes = this.aligner.push(pcm);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const events: VadEvent[] = [];
    for (let i = 0; i < bytes.length; i += 2) {
      const sample = view.getInt16(i, true);
      this.sumSquares += sample * sample;
      this.filled += 1;
      if (this.filled === this.frameSamples) {
        const event = this.endFrame();
        if (event) events.push(event);
      }
    }
    return events;
  }

  /** The end of the audio: a segment still open ends where its silence began, or where the audio ends. */
  finish(): VadEvent[] {
    if (!this.inSpeech) return [];
    this.inSpeech = false;
    const sampleOffset = this.run > 0 ? this.runStart : this.position;
    this.run = 0;
    return [{ type: "speech_ended", sampleOffset }];
  }

  private endFrame(): VadEvent | undefined {
    const offset = this.frames * this.frameSamples;
    const meanSquare = this.sumSquares / this.frameSamples / FULL_SCALE_SQUARED;
    const db = meanSquare > 0 ? Math.max(SILENCE_DB, 10 * Math.log10(meanSquare)) : SILENCE_DB;
    this.frames += 1;
    this.filled = 0;
    this.sumSquares = 0;

    const floor = this.floorDb ?? db;
    const speech = db >= Math.max(floor + this.thresholdDb, this.minSpeechLevelDb);
    this.floorDb = db < floor ? db : floor + (db - floor) * this.riseFactor;

    if (speech === this.inSpeech) {
      this.run = 0;
      return undefined;
    }
    if (this.run === 0) this.runStart = offset;
    this.run += 1;
    if (this.run < (this.inSpeech ? this.endFrames : this.startFrames)) return undefined;
    this.inSpeech = !this.inSpeech;
    this.run = 0;
    return { type: this.inSpeech ? "speech_started" : "speech_ended", sampleOffset: this.runStart };
  }
}
