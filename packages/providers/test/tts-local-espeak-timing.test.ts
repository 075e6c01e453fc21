import { afterAll, describe, expect, it } from "vitest";
import { samplesFromBytes } from "../src/audio/pcm.js";
import { LocalEspeakSynthesizer, phonemeMarks } from "../src/tts/local-espeak.js";
import { SESSION_SAMPLE_RATE } from "../src/types.js";

/** Real eSpeak NG runs: the phoneme events come with the audio of the same run. */

const synthesizer = new LocalEspeakSynthesizer();
afterAll(() => synthesizer.close());

async function timed(text: string, language = "en") {
  const out = [];
  for await (const chunk of synthesizer.synthesizeTimed({ text, voiceId: "x", settings: {}, language }))
    out.push(chunk);
  return out;
}

describe("LocalEspeakSynthesizer.synthesizeTimed", () => {
  it("yields each sentence's audio with its phonemes, in order and within the audio", async () => {
    const chunks = await timed("Hello world. Maybe we can talk about it later.");
    expect(chunks).toHaveLength(2);
    for (const { pcm, phonemes } of chunks) {
      const ms = (samplesFromBytes(pcm).length / SESSION_SAMPLE_RATE) * 1000;
      expect(ms).toBeGreaterThan(300);
      expect(phonemes.length).toBeGreaterThan(5);
      for (const [i, p] of phonemes.entries()) {
        expect(p.startMs).toBeGreaterThanOrEqual(i > 0 ? (phonemes[i - 1]?.startMs ?? 0) : 0);
        expect(p.startMs + p.durationMs).toBeLessThanOrEqual(ms + 1);
      }
    }
    const names = (chunks[0]?.phonemes ?? []).map((p) => p.phoneme).join(" ");
    expect(names).toContain("h");
    expect(names).toContain("w");
    expect(names).toContain("l");
    // "maybe": the lips close for the m and the b.
    expect(
      (chunks[1]?.phonemes ?? []).filter((p) => p.phoneme === "m" || p.phoneme === "b").length,
    ).toBeGreaterThanOrEqual(2);
  });

  it("places the phonemes where the sound is: a long vowel lasts longer than a stop", async () => {
    const [chunk] = await timed("Ah, tea.");
    const vowel = chunk?.phonemes.find((p) => /ɑ|a/.test(p.phoneme));
    const stop = chunk?.phonemes.find((p) => p.phoneme === "t");
    expect(vowel?.durationMs).toBeGreaterThan(stop?.durationMs ?? Infinity);
  });

  it("turns event starts into marks that end where the next begins", () => {
    expect(
      phonemeMarks(
        [
          { phoneme: "h", atMs: 10 },
          { phoneme: "ə", atMs: 60 },
        ],
        100,
      ),
    ).toEqual([
      { phoneme: "h", startMs: 10, durationMs: 50 },
      { phoneme: "ə", startMs: 60, durationMs: 40 },
    ]);
  });
});
