/**
 * 24 kHz to 48 kHz, streaming: each input sample gives two output samples, the second interpolated by a
 * windowed-sinc half-band filter (16 taps a side), so Opus gets no images of the voice above 12 kHz.
 * Output lags input by TAPS samples (0.33 ms). `reset` after an interrupt forgets the history.
 */
const TAPS = 8;
const KERNEL = (() => {
  const k = new Float64Array(2 * TAPS);
  let sum = 0;
  for (let i = 0; i < 2 * TAPS; i++) {
    const t = i - TAPS + 0.5; // distance (in input samples) from the interpolated point
    const sinc = Math.sin(Math.PI * t) / (Math.PI * t);
    const window = 0.5 + 0.5 * Math.cos((Math.PI * t) / (TAPS + 0.5));
    k[i] = sinc * window;
    sum += k[i] as number;
  }
  for (let i = 0; i < 2 * TAPS; i++) k[i] = (k[i] as number) / sum;
  return k;
})();

export class Upsampler2x {
  /** The last 2 * TAPS input samples, twice over, so a window is always one contiguous slice. */
  private history = new Float64Array(4 * TAPS);
  private at = 0;

  /** `out` must hold 2 * input.length samples. */
  process(input: Int16Array, out: Int16Array): void {
    const h = this.history;
    const n2 = 2 * TAPS;
    for (let n = 0; n < input.length; n++) {
      const x = input[n] as number;
      h[this.at] = x;
      h[this.at + n2] = x;
      this.at = (this.at + 1) % n2;
      // Window h[at .. at + 2 TAPS): the centre pair is its TAPS - 1 and TAPS; output the first, then
      // the point between the two.
      let mid = 0;
      for (let i = 0; i < n2; i++) mid += (h[this.at + i] as number) * (KERNEL[i] as number);
      out[2 * n] = h[this.at + TAPS - 1] as number;
      out[2 * n + 1] = mid < -32768 ? -32768 : mid > 32767 ? 32767 : Math.round(mid);
    }
  }

  reset(): void {
    this.history.fill(0);
    this.at = 0;
  }
}
