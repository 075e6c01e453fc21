import { describe, expect, it } from "vitest";
import {
  decodeMulaw,
  encodeMulaw,
  parseWireFormat,
  WireAudioDecoder,
  WireAudioEncoder,
} from "../src/agents/wire-audio.js";
import { bytesFromSamples, samplesFromBytes } from "../src/audio/pcm.js";

describe("agent wire audio", () => {
  it("parses the formats agents name", () => {
    expect(parseWireFormat("pcm_16000")).toEqual({ encoding: "pcm", sampleRate: 16_000 });
    expect(parseWireFormat("ulaw_8000")).toEqual({ encoding: "mulaw", sampleRate: 8000 });
    expect(parseWireFormat("mulaw_8000")).toEqual({ encoding: "mulaw", sampleRate: 8000 });
    expect(parseWireFormat("mp3_44100_128")).toBeUndefined();
    expect(parseWireFormat("pcm_100")).toBeUndefined();
  });

  it("codes mu-law as G.711 does", () => {
    expect(
      Array.from(samplesFromBytes(decodeMulaw(Uint8Array.of(0xff, 0x7f, 0x80, 0x00, 0xfe, 0xef, 0x6f)))),
    ).toEqual([0, 0, 32_124, -32_124, 8, 132, -132]);
    expect(Array.from(encodeMulaw(bytesFromSamples(Int16Array.of(0, 32_767, -32_768, 8, -8, 132))))).toEqual([
      0xff, 0x80, 0x00, 0xfe, 0x7e, 0xef,
    ]);
    // Every 16-bit value comes back within one quantisation step of its segment.
    const all = new Int16Array(65_536);
    for (let i = 0; i < all.length; i++) all[i] = i - 32_768;
    const back = samplesFromBytes(decodeMulaw(encodeMulaw(bytesFromSamples(all))));
    for (let i = 0; i < all.length; i++) {
      const x = Math.min(32_635, Math.abs(all[i] as number));
      const step = 2 ** (Math.max(0, Math.floor(Math.log2((x + 0x84) >> 7))) + 3);
      expect(Math.abs((back[i] as number) - Math.sign(all[i] as number) * x)).toBeLessThanOrEqual(step);
    }
  });

  it("keeps whole samples when chunks split one", () => {
    const encoder = new WireAudioEncoder({ encoding: "pcm", sampleRate: 24_000 });
    const decoder = new WireAudioDecoder({ encoding: "pcm", sampleRate: 24_000 });
    const pcm = bytesFromSamples(Int16Array.of(1, -2, 300, -4000));
    const sent = [encoder.encode(pcm.subarray(0, 3)), encoder.encode(pcm.subarray(3))];
    expect(sent.map((c) => c.length)).toEqual([2, 6]);
    const played = [decoder.decode(pcm.subarray(0, 5)), decoder.decode(pcm.subarray(5))];
    expect(Buffer.concat(played)).toEqual(Buffer.from(pcm));
  });
});
