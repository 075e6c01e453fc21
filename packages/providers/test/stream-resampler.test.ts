import { describe, expect, it } from "vitest";
import { PcmResampler, resamplePcm } from "../src/audio/stream-resampler.js";

function sine(frequency: number, rate: number, seconds: number, amplitude = 10_000): Uint8Array {
  const count = Math.round(rate * seconds);
  const bytes = new Uint8Array(count * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < count; i++) {
    view.setInt16(i * 2, Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / rate)), true);
  }
  return bytes;
}

function samples(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length / 2 }, (_, i) => view.getInt16(i * 2, true));
}

/** Frequency from upward zero crossings, skipping the filter's start-up. */
function frequencyOf(values: number[], rate: number): number {
  const crossings: number[] = [];
  for (let i = 100; i < values.length; i++) {
    const a = values[i - 1] as number;
    const b = values[i] as number;
    if (a < 0 && b >= 0) crossings.push(i - 1 + -a / (b - a));
  }
  const first = crossings[0] as number;
  const last = crossings[crossings.length - 1] as number;
  return ((crossings.length - 1) * rate) / (last - first);
}

function rms(values: number[]): number {
  const tail = values.slice(100);
  return Math.sqrt(tail.reduce((sum, v) => sum + v * v, 0) / tail.length);
}

describe("PcmResampler", () => {
  it("keeps a tone's frequency and the 2:3 length ratio when going from 24 kHz to 16 kHz", () => {
    const out = samples(resamplePcm(sine(440, 24_000, 1), 24_000, 16_000));
    expect(Math.abs(out.length - 16_000)).toBeLessThanOrEqual(1);
    expect(frequencyOf(out, 16_000)).toBeCloseTo(440, 0);
    // A tone well inside the passband keeps its level (amplitude 10000 -> RMS about 7071).
    expect(rms(out)).toBeGreaterThan(6_800);
    expect(rms(out)).toBeLessThan(7_300);
  });

  it("keeps a tone's frequency when going up from 16 kHz to 24 kHz", () => {
    const out = samples(resamplePcm(sine(1_000, 16_000, 1), 16_000, 24_000));
    expect(Math.abs(out.length - 24_000)).toBeLessThanOrEqual(2);
    expect(frequencyOf(out, 24_000)).toBeCloseTo(1_000, 0);
  });

  it("filters out what 16 kHz cannot carry instead of folding it back", () => {
    // 10 kHz is above the 8 kHz limit of a 16 kHz stream; unfiltered it would alias to 6 kHz at full level.
    const out = samples(resamplePcm(sine(10_000, 24_000, 0.5), 24_000, 16_000));
    expect(rms(out)).toBeLessThan(7_071 * 0.1);
  });

  it("gives the same samples chunk by chunk, odd-sized chunks included, as in one go", () => {
    const input = sine(523, 24_000, 0.3);
    const whole = resamplePcm(input, 24_000, 16_000);
    const resampler = new PcmResampler(24_000, 16_000);
    const pieces: Uint8Array[] = [];
    for (let offset = 0, size = 1; offset < input.length; offset += size, size = (size * 7) % 997 || 3) {
      pieces.push(resampler.process(input.subarray(offset, offset + size)));
    }
    const joined = Buffer.concat(pieces);
    expect(new Uint8Array(joined)).toEqual(whole);
  });

  it("clamps instead of wrapping around at full scale", () => {
    const loud = sine(200, 24_000, 0.1, 32_767);
    const out = samples(resamplePcm(loud, 24_000, 16_000));
    expect(Math.max(...out)).toBeGreaterThan(30_000);
    expect(Math.min(...out)).toBeLessThan(-30_000);
  });
});
