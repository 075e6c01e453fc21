/**
 * A streaming resampler for PCM signed 16-bit little-endian mono. Linear interpolation between samples;
 * when downsampling, a windowed-sinc low-pass first removes what the lower rate cannot represent (it
 * would otherwise fold back as aliasing). State carries across chunks, so resampling a stream chunk by
 * chunk gives the same samples as resampling it whole, and the output length follows the rate ratio.
 */
const TAPS = 31;

export class PcmResampler {
  /** Input samples advanced per output sample. */
  private readonly step: number;
  private readonly kernel: Float64Array | undefined;
  /** The last TAPS - 1 input samples, for the filter at the start of the next chunk. */
  private readonly history: Float64Array;
  /** The last filtered sample of the previous chunk (index -1 of the next one). */
  private previous: number | undefined;
  /** Where the next output sample falls, in input samples from the start of the next chunk. */
  private position = 0;
  /** A byte left over when a chunk had an odd length. */
  private oddByte: number | undefined;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (!(fromRate > 0 && toRate > 0)) throw new RangeError("sample rates must be positive");
    this.step = fromRate / toRate;
    this.kernel = toRate < fromRate ? lowPass(TAPS, (0.45 * toRate) / fromRate) : undefined;
    this.history = new Float64Array(TAPS - 1);
  }

  process(pcm: Uint8Array): Uint8Array {
    const input = this.samples(pcm);
    if (input.length === 0) return new Uint8Array(0);
    const x = this.kernel ? this.filter(input, this.kernel) : input;
    const out: number[] = [];
    for (;;) {
      const i = Math.floor(this.position);
      if (i + 1 >= x.length) break;
      const a = i < 0 ? (this.previous ?? 0) : (x[i] as number);
      const b = x[i + 1] as number;
      out.push(a + (b - a) * (this.position - i));
      this.position += this.step;
    }
    this.previous = x[x.length - 1];
    this.position -= x.length;
    return toPcm(out);
  }

  private samples(pcm: Uint8Array): Float64Array {
    let bytes = pcm;
    if (this.oddByte !== undefined) {
      bytes = new Uint8Array(pcm.length + 1);
      bytes[0] = this.oddByte;
      bytes.set(pcm, 1);
      this.oddByte = undefined;
    }
    const count = bytes.length >> 1;
    if (bytes.length % 2 === 1) this.oddByte = bytes[bytes.length - 1];
    const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
    const samples = new Float64Array(count);
    for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
    return samples;
  }

  /** Causal FIR over the history plus this chunk; the history then keeps this chunk's tail. */
  private filter(input: Float64Array, kernel: Float64Array): Float64Array {
    const n = this.history.length;
    const padded = new Float64Array(n + input.length);
    padded.set(this.history);
    padded.set(input, n);
    const out = new Float64Array(input.length);
    for (let i = 0; i < input.length; i++) {
      let sum = 0;
      for (let k = 0; k < kernel.length; k++) sum += (kernel[k] as number) * (padded[i + n - k] as number);
      out[i] = sum;
    }
    this.history.set(padded.subarray(padded.length - n));
    return out;
  }
}

/** A Hamming-windowed sinc low-pass with `cutoff` in cycles per sample, normalised to unity gain. */
function lowPass(taps: number, cutoff: number): Float64Array {
  const kernel = new Float64Array(taps);
  const middle = (taps - 1) / 2;
  let sum = 0;
  for (let k = 0; k < taps; k++) {
    const t = k - middle;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * k) / (taps - 1));
    kernel[k] = sinc * window;
    sum += sinc * window;
  }
  for (let k = 0; k < taps; k++) kernel[k] = (kernel[k] as number) / sum;
  return kernel;
}

function toPcm(samples: number[]): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.round(samples[i] as number);
    view.setInt16(i * 2, Math.min(32767, Math.max(-32768, s)), true);
  }
  return out;
}

/** Resamples a whole buffer in one go. */
export function resamplePcm(pcm: Uint8Array, fromRate: number, toRate: number): Uint8Array {
  if (fromRate === toRate) return pcm;
  return new PcmResampler(fromRate, toRate).process(pcm);
}
