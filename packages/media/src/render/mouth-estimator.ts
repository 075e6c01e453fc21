import type { Viseme } from "../look/visemes.js";

/**
 * The mouth from the audio itself, for any source of speech: openness from the loudness (relative to a
 * slowly decaying peak, so quiet and loud voices both animate), shape from two cheap spectral features
 * (zero crossings for hiss, the share of energy below ~1 kHz for rounded against spread vowels).
 * Where phoneme marks name the viseme, the marks choose the shape and the audio only the openness.
 */

export interface MouthTarget {
  viseme: Viseme;
  /** 0..1. */
  openness: number;
}

/** Below this level (dBFS) nothing is said. */
const SILENCE_DB = -52;
/** Loudness range mapped onto openness, dB below the running peak. */
const RANGE_DB = 30;

export class MouthEstimator {
  private peakDb = -24;
  private open = 0;
  private lowState = 0;

  constructor(private readonly sampleRate: number) {}

  /** One frame's voice (at the estimator's rate). */
  next(pcm: Int16Array, voiced: number, marked: Viseme | undefined): MouthTarget {
    if (voiced === 0) return this.rest();
    let energy = 0;
    let lowEnergy = 0;
    let crossings = 0;
    // One-pole low-pass at ~900 Hz for the low-band share.
    const a = Math.exp((-2 * Math.PI * 900) / this.sampleRate);
    let low = this.lowState;
    let prev = pcm[0] as number;
    for (let i = 0; i < pcm.length; i++) {
      const x = (pcm[i] as number) / 32768;
      energy += x * x;
      low = (1 - a) * x + a * low;
      lowEnergy += low * low;
      const s = pcm[i] as number;
      if (s >= 0 !== prev >= 0) crossings++;
      prev = s;
    }
    this.lowState = low;
    const rms = Math.sqrt(energy / pcm.length);
    const db = 20 * Math.log10(rms + 1e-9);
    // The peak follows loud speech at once and decays ~6 dB a second.
    this.peakDb = Math.max(db, this.peakDb - 0.24, SILENCE_DB + RANGE_DB / 2);
    if (db < SILENCE_DB) return this.rest();
    const level = Math.min(1, Math.max(0, (db - (this.peakDb - RANGE_DB)) / RANGE_DB));
    const raw = level ** 1.4;
    // Opens at once, closes over a couple of frames, like a jaw.
    this.open = Math.max(raw, this.open * 0.45);
    const zcr = crossings / pcm.length;
    const lowShare = energy > 0 ? lowEnergy / energy : 1;
    return { viseme: marked ?? shapeOf(this.open, zcr, lowShare), openness: this.open };
  }

  /** Interrupt or silence: the mouth closes now. */
  rest(): MouthTarget {
    this.open = 0;
    return { viseme: "rest", openness: 0 };
  }
}

function shapeOf(open: number, zcr: number, lowShare: number): Viseme {
  if (open < 0.08) return "rest";
  if (zcr > 0.28) return open > 0.45 ? "E" : "etc";
  if (open < 0.22) return "etc";
  if (lowShare > 0.8) return open > 0.55 ? "O" : "WQ";
  if (lowShare < 0.45) return "E";
  return open > 0.5 ? "AI" : "E";
}
