import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { samplesFromBytes } from "../src/audio/pcm.js";
import { parseWav } from "../src/audio/wav.js";
import { EspeakRunner } from "../src/tts/espeak-runner.js";
import { LocalEspeakSynthesizer, wordsPerMinuteFor } from "../src/tts/local-espeak.js";
import type { SynthesisRequest } from "../src/types.js";
import { collect, concat } from "./servers/collect.js";

/** Real eSpeak-NG runs (WebAssembly in worker threads): real audio, so properties, not exact bytes. */

const TEN_WORDS = "The quick brown fox jumps over the lazy sleeping dog today.";
const synthesizer = new LocalEspeakSynthesizer({ workers: 2 });
const runner = new EspeakRunner(1);

const request = (text: string, overrides: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
  text,
  voiceId: "ignored",
  settings: {},
  language: "en",
  ...overrides,
});

async function speak(text: string, overrides: Partial<SynthesisRequest> = {}) {
  const { chunks, error } = await collect(synthesizer.synthesize(request(text, overrides)));
  expect(error).toBeUndefined();
  return chunks;
}

function rms(pcm: Uint8Array): number {
  const samples = samplesFromBytes(pcm);
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

beforeAll(() => synthesizer.warmUp());
afterAll(async () => {
  await synthesizer.close();
  await runner.close();
});

describe("LocalEspeakSynthesizer", () => {
  it("turns a sentence into 24 kHz PCM as long as eSpeak's own 22050 Hz audio", async () => {
    const wav = parseWav(await runner.run({ text: TEN_WORDS, voice: "en-us", wordsPerMinute: 175 }));
    expect(wav.sampleRate).toBe(22_050);
    const expectedBytes = (wav.samples.length / wav.sampleRate) * 24_000 * 2;
    const pcm = concat(await speak(TEN_WORDS));
    expect(pcm.length % 2).toBe(0);
    expect(Math.abs(pcm.length - expectedBytes) / expectedBytes).toBeLessThan(0.01);
    // About three seconds of speech, and not silence.
    expect(pcm.length / 48_000).toBeGreaterThan(2);
    expect(rms(pcm)).toBeGreaterThan(500);
  });

  it("gives longer audio for longer text", async () => {
    const short = concat(await speak("Hello there."));
    const long = concat(
      await speak("Hello there, and welcome to a considerably longer sentence than the first one."),
    );
    expect(long.length).toBeGreaterThan(short.length * 2);
  });

  it("streams one chunk per sentence, in order", async () => {
    const sentences = ["One small step.", "Then a much longer stride forward!", "Done?"];
    const chunks = await speak(sentences.join(" "));
    expect(chunks).toHaveLength(3);
    // eSpeak is deterministic: each chunk is exactly what its sentence gives on its own.
    for (const [i, sentence] of sentences.entries()) expect(chunks[i]).toEqual(concat(await speak(sentence)));
  });

  it("speaks faster at a higher speed", async () => {
    const slow = concat(await speak(TEN_WORDS, { settings: { speed: 0.8 } }));
    const fast = concat(await speak(TEN_WORDS, { settings: { speed: 1.5 } }));
    expect(fast.length).toBeLessThan(slow.length * 0.75);
    expect(wordsPerMinuteFor(1)).toBe(175);
    expect(wordsPerMinuteFor(10)).toBe(450);
  });

  it("speaks text that looks like command-line options instead of obeying it", async () => {
    const pcm = concat(await speak("-w /tmp/out.wav --voices -v xx hello"));
    expect(pcm.length / 48_000).toBeGreaterThan(1);
    expect(rms(pcm)).toBeGreaterThan(500);
  });

  it("speaks other languages with their voice, and unknown ones in English", async () => {
    expect(rms(concat(await speak("Bonjour tout le monde.", { language: "fr-FR" })))).toBeGreaterThan(500);
    expect(concat(await speak("Hello there.", { language: "xx-unknown" }))).toEqual(
      concat(await speak("Hello there.", { language: "en" })),
    );
  });

  it("stops at once when the signal aborts mid-utterance", async () => {
    const controller = new AbortController();
    const received: Uint8Array[] = [];
    for await (const chunk of synthesizer.synthesize(
      request("First. Second. Third. Fourth."),
      controller.signal,
    )) {
      received.push(chunk);
      controller.abort();
    }
    expect(received).toHaveLength(1);
  });

  it("yields nothing for empty text or an already aborted signal", async () => {
    expect(await speak("  ")).toEqual([]);
    const controller = new AbortController();
    controller.abort();
    expect((await collect(synthesizer.synthesize(request(TEN_WORDS), controller.signal))).chunks).toEqual([]);
  });

  it("reports a failing run as a ProviderError and keeps working", async () => {
    await expect(runner.run({ text: "hi", voice: "xx-yy", wordsPerMinute: 175 })).rejects.toMatchObject({
      provider: "localEspeak",
      kind: "unavailable",
      message: expect.stringMatching(/voice does not exist/),
    });
    expect((await runner.run({ text: "hi", voice: "en-us", wordsPerMinute: 175 })).length).toBeGreaterThan(
      44,
    );
  });
});
