/**
 * The audio formats hosted agents name on the wire (`pcm_16000`, `ulaw_8000`, `mulaw_8000`, ...) and the
 * conversions between them and the session's 24 kHz PCM: G.711 mu-law coding and resampling, both
 * streaming (state carries across chunks).
 */
import { bytesFromSamples, SampleAligner, samplesFromBytes } from "../audio/pcm.js";
import { PcmResampler } from "../audio/stream-resampler.js";
import { SESSION_SAMPLE_RATE } from "../types.js";

export interface WireAudioFormat {
  encoding: "pcm" | "mulaw";
  sampleRate: number;
}

/** `pcm_16000` -> {pcm, 16000}; `ulaw_8000` / `mulaw_8000` -> {mulaw, 8000}; anything else undefined. */
export function parseWireFormat(name: string): WireAudioFormat | undefined {
  const match = /^(pcm|ulaw|mulaw)_(\d+)$/.exec(name);
  if (!match) return undefined;
  const sampleRate = Number(match[2]);
  if (!(sampleRate >= 8000 && sampleRate <= 48_000)) return undefined;
  return { encoding: match[1] === "pcm" ? "pcm" : "mulaw", sampleRate };
}

/** An agent's audio in its wire format -> session PCM, in whole samples. */
export class WireAudioDecoder {
  private readonly resampler: PcmResampler | undefined;
  private readonly aligner = new SampleAligner();

  constructor(private readonly format: WireAudioFormat) {
    this.resampler =
      format.sampleRate === SESSION_SAMPLE_RATE
        ? undefined
        : new PcmResampler(format.sampleRate, SESSION_SAMPLE_RATE);
  }

  decode(bytes: Uint8Array): Uint8Array {
    const pcm = this.format.encoding === "mulaw" ? decodeMulaw(bytes) : bytes;
    return this.resampler ? this.resampler.process(pcm) : this.aligner.push(pcm);
  }
}

/** Session PCM -> the agent's input wire format, in whole samples (a split sample waits for its other byte). */
export class WireAudioEncoder {
  private readonly resampler: PcmResampler | undefined;
  private readonly aligner = new SampleAligner();

  constructor(private readonly format: WireAudioFormat) {
    this.resampler =
      format.sampleRate === SESSION_SAMPLE_RATE
        ? undefined
        : new PcmResampler(SESSION_SAMPLE_RATE, format.sampleRate);
  }

  encode(pcm: Uint8Array): Uint8Array {
    const samples = this.resampler ? this.resampler.process(pcm) : this.aligner.push(pcm);
    return this.format.encoding === "mulaw" ? encodeMulaw(samples) : samples;
  }
}

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32_635;

/** G.711 mu-law bytes -> 16-bit little-endian PCM. */
export function decodeMulaw(bytes: Uint8Array): Uint8Array {
  const samples = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const u = ~(bytes[i] as number) & 0xff;
    const exponent = (u >> 4) & 0x07;
    const magnitude = ((((u & 0x0f) << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
    samples[i] = u & 0x80 ? -magnitude : magnitude;
  }
  return bytesFromSamples(samples);
}

/** 16-bit little-endian PCM (an even byte count) -> G.711 mu-law bytes. */
export function encodeMulaw(pcm: Uint8Array): Uint8Array {
  const samples = samplesFromBytes(pcm);
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    let sample = samples[i] as number;
    const sign = sample < 0 ? 0x80 : 0;
    if (sign) sample = -sample;
    sample = Math.min(sample, MULAW_CLIP) + MULAW_BIAS;
    let exponent = 7;
    for (let mask = 0x4000; (sample & mask) === 0 && exponent > 0; mask >>= 1) exponent -= 1;
    const mantissa = (sample >> (exponent + 3)) & 0x0f;
    out[i] = ~(sign | (exponent << 4) | mantissa) & 0xff;
  }
  return out;
}
