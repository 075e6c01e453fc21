import { describe, expect, it } from "vitest";
import {
  bytesFromSamples,
  SampleAligner,
  samplesFromBytes,
  writeSamplesFromBytes,
} from "../src/audio/pcm.js";
import { parseWav } from "../src/audio/wav.js";

interface WavParts {
  rate?: number;
  channels?: number;
  bits?: number;
  format?: number;
  /** Chunks placed before fmt and between fmt and data. */
  before?: Array<[string, Uint8Array]>;
  between?: Array<[string, Uint8Array]>;
  data: Uint8Array;
  declaredDataSize?: number;
}

function chunk(id: string, body: Uint8Array, declared = body.length): Uint8Array {
  const out = new Uint8Array(8 + body.length + (body.length % 2));
  out.set(Buffer.from(id, "latin1"));
  new DataView(out.buffer).setUint32(4, declared, true);
  out.set(body, 8);
  return out;
}

function wav(parts: WavParts): Uint8Array {
  const { rate = 22_050, channels = 1, bits = 16, format = 1 } = parts;
  const fmt = new Uint8Array(16);
  const view = new DataView(fmt.buffer);
  view.setUint16(0, format, true);
  view.setUint16(2, channels, true);
  view.setUint32(4, rate, true);
  view.setUint32(8, (rate * channels * bits) / 8, true);
  view.setUint16(12, (channels * bits) / 8, true);
  view.setUint16(14, bits, true);
  const body = Buffer.concat([
    Buffer.from("WAVE", "latin1"),
    ...(parts.before ?? []).map(([id, b]) => chunk(id, b)),
    chunk("fmt ", fmt),
    ...(parts.between ?? []).map(([id, b]) => chunk(id, b)),
    chunk("data", parts.data, parts.declaredDataSize),
  ]);
  return new Uint8Array(Buffer.concat([chunk("RIFF", body)]));
}

describe("parseWav", () => {
  const samples = new Int16Array([0, 1, -1, 32767, -32768, 1234]);

  it("reads a plain 44-byte-header file", () => {
    const parsed = parseWav(wav({ data: bytesFromSamples(samples) }));
    expect(parsed.sampleRate).toBe(22_050);
    expect(parsed.samples).toEqual(samples);
  });

  it("walks past other chunks, odd-sized ones included, wherever they sit", () => {
    const parsed = parseWav(
      wav({
        rate: 24_000,
        before: [["JUNK", new Uint8Array(5)]],
        between: [["LIST", new Uint8Array(27).fill(7)]],
        data: bytesFromSamples(samples),
      }),
    );
    expect(parsed.sampleRate).toBe(24_000);
    expect(parsed.samples).toEqual(samples);
  });

  it("takes what the file holds when a streaming writer left a placeholder data size", () => {
    expect(parseWav(wav({ data: bytesFromSamples(samples), declaredDataSize: 0x7ffff000 })).samples).toEqual(
      samples,
    );
  });

  it("mixes stereo down to mono", () => {
    const stereo = bytesFromSamples(new Int16Array([100, 300, -100, -300]));
    expect(parseWav(wav({ channels: 2, data: stereo })).samples).toEqual(new Int16Array([200, -200]));
  });

  it("refuses what it cannot read", () => {
    expect(() => parseWav(new Uint8Array(40))).toThrow(/RIFF/);
    expect(() => parseWav(wav({ bits: 8, data: new Uint8Array(4) }))).toThrow(/unsupported/);
    expect(() => parseWav(wav({ format: 3, bits: 32, data: new Uint8Array(8) }))).toThrow(/unsupported/);
    const noData = wav({ data: new Uint8Array(0) }).subarray(0, 12 + 24);
    expect(() => parseWav(noData)).toThrow(/no data chunk/);
  });
});

describe("PCM helpers", () => {
  it("converts samples to little-endian bytes and back", () => {
    const samples = new Int16Array([1, -2, 300, -32768]);
    const bytes = bytesFromSamples(samples);
    expect([...bytes.subarray(0, 4)]).toEqual([1, 0, 0xfe, 0xff]);
    expect(samplesFromBytes(bytes)).toEqual(samples);
    expect(() => samplesFromBytes(new Uint8Array(3))).toThrow(RangeError);
  });

  it("gives the same samples and bytes by the copy (little-endian host) and by the per-sample path", () => {
    const samples = new Int16Array([0, 1, -1, 255, 256, -256, 32767, -32768, 12345]);
    for (const littleEndianHost of [true, false]) {
      const bytes = bytesFromSamples(samples, littleEndianHost);
      expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 0xff, 0xff]);
      // From an odd offset in a larger buffer (a subarray of a received frame), and not aliased to it.
      const framed = new Uint8Array(bytes.length + 3);
      framed.set(bytes, 3);
      const read = samplesFromBytes(framed.subarray(3), littleEndianHost);
      expect(read).toEqual(samples);
      framed.fill(0);
      expect(read).toEqual(samples);
      // From samples that are a view into part of a larger buffer.
      const part = new Int16Array([7, ...samples, 7]).subarray(1, samples.length + 1);
      expect(bytesFromSamples(part, littleEndianHost)).toEqual(bytes);
    }
  });

  it("writes samples into a buffer at an index, by the copy and by the per-sample path, and only where they fit", () => {
    const samples = new Int16Array([5, -5, 32767, -32768]);
    for (const littleEndianHost of [true, false]) {
      const bytes = bytesFromSamples(samples, littleEndianHost);
      // The target is a view into part of a larger buffer: nothing outside the view is touched.
      const whole = new Int16Array(10).fill(9);
      const target = whole.subarray(2, 9);
      writeSamplesFromBytes(bytes, target, 3, littleEndianHost);
      expect([...whole]).toEqual([9, 9, 9, 9, 9, 5, -5, 32767, -32768, 9]);
      expect(() => writeSamplesFromBytes(bytes, target, 4, littleEndianHost)).toThrow(RangeError);
      expect(() => writeSamplesFromBytes(bytes, target, -1, littleEndianHost)).toThrow(RangeError);
      expect(() => writeSamplesFromBytes(new Uint8Array(3), target, 0, littleEndianHost)).toThrow(RangeError);
    }
  });

  it("re-cuts split samples into whole ones without losing or reordering a byte", () => {
    const stream = Uint8Array.from({ length: 101 }, (_, i) => i);
    const aligner = new SampleAligner();
    const out: number[] = [];
    let at = 0;
    for (const size of [1, 3, 0, 2, 5, 7, 1, 82]) {
      const aligned = aligner.push(stream.subarray(at, at + size));
      at += size;
      expect(aligned.length % 2).toBe(0);
      out.push(...aligned);
    }
    expect(out).toEqual([...stream.subarray(0, 100)]);
    expect(aligner.pending).toBe(true);
  });
});
