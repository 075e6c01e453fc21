import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { samplesFromBytes } from "../src/audio/pcm.js";
import {
  createEngine,
  createResettableEngine,
  type EspeakJob,
  RESETTABLE_TEXT_BYTES,
  selectVoice,
  speak as speakFresh,
} from "../src/tts/espeak-engine.mjs";
import { EspeakRunner, SYNTHESIS_NICENESS } from "../src/tts/espeak-runner.js";
import { ESPEAK_VOICES, espeakVoiceFor } from "../src/tts/espeak-voices.js";
import { LocalEspeakSynthesizer, wordsPerMinuteFor } from "../src/tts/local-espeak.js";
import type { SynthesisRequest } from "../src/types.js";
import { collect, concat } from "./servers/collect.js";

/** Real eSpeak NG runs (in worker processes): real audio, so properties, and exact bytes only run to run. */

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

/** This process's eSpeak worker processes (children running espeak-worker.mjs). */
function espeakWorkers(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
        return ppid === process.pid && cmdline.includes("espeak-worker.mjs") ? [Number(entry)] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

function rms(pcm: Uint8Array | Int16Array): number {
  const samples = pcm instanceof Int16Array ? pcm : samplesFromBytes(pcm);
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

beforeAll(() => synthesizer.prepare());
afterAll(async () => {
  await synthesizer.close();
  await runner.close();
});

describe("LocalEspeakSynthesizer", () => {
  it("turns a sentence into 24 kHz PCM as long as eSpeak's own 22050 Hz audio", async () => {
    const run = await runner.run({ text: TEN_WORDS, voice: "en-us", wordsPerMinute: 175 });
    expect(run.sampleRate).toBe(22_050);
    const expectedBytes = (run.pcm.length / run.sampleRate) * 24_000 * 2;
    const pcm = concat(await speak(TEN_WORDS));
    expect(pcm.length % 2).toBe(0);
    expect(Math.abs(pcm.length - expectedBytes) / expectedBytes).toBeLessThan(0.01);
    // About three seconds of speech, and not silence.
    expect(pcm.length / 48_000).toBeGreaterThan(2);
    expect(rms(pcm)).toBeGreaterThan(500);
  });

  it("yields exactly the audio synthesizeTimed yields, the same every time", async () => {
    const text = "Hello world. Maybe we can talk about it later, if you like?";
    const plain = await speak(text);
    const timed: Uint8Array[] = [];
    for await (const speech of synthesizer.synthesizeTimed(request(text))) timed.push(speech.pcm);
    expect(plain).toHaveLength(2);
    expect(timed).toEqual(plain);
    expect(await speak(text)).toEqual(plain);
  });

  it("ends each sentence with eSpeak's pause for its punctuation", async () => {
    const quietMs = (pcm: Uint8Array) => {
      const samples = samplesFromBytes(pcm);
      let end = samples.length;
      while (end > 0 && Math.abs(samples[end - 1] ?? 0) < 100) end--;
      return ((samples.length - end) / 24_000) * 1000;
    };
    const [sentence, clause] = await Promise.all([speak("Hello there."), speak("Hello there,")]);
    expect(quietMs(concat(sentence))).toBeGreaterThan(250);
    expect(quietMs(concat(clause))).toBeGreaterThan(100);
    expect(quietMs(concat(clause))).toBeLessThan(quietMs(concat(sentence)));
  });

  it("speaks markup as text instead of obeying it", async () => {
    const longestPauseMs = (pcm: Uint8Array) => {
      let longest = 0;
      let run = 0;
      for (const s of samplesFromBytes(pcm)) {
        run = Math.abs(s) < 100 ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      return (longest / 24_000) * 1000;
    };
    // An obeyed <break> would be three seconds of silence, an obeyed <voice> French phonemes.
    const chunks = [];
    for await (const speech of synthesizer.synthesizeTimed(
      request("Wait <break time='3s'/> for <voice name='fr'>bonjour</voice> & go"),
    ))
      chunks.push(speech);
    const pcm = concat(chunks.map((c) => c.pcm));
    expect(longestPauseMs(pcm)).toBeLessThan(1000);
    expect(rms(pcm)).toBeGreaterThan(500);
    expect(chunks.flatMap((c) => c.phonemes.map((p) => p.phoneme)).join("")).not.toContain("ʁ");
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

  it("has every voice it maps languages to", async () => {
    const engine = await createEngine();
    const missing = [...ESPEAK_VOICES].filter((voice) => !selectVoice(engine, voice));
    expect(missing).toEqual([]);
    expect(selectVoice(engine, "xx-yy")).toBe(false);
  });

  it("speaks a voice found by its language with that language's phonemes", async () => {
    // fr-fr names no voice file: the engine picks French (roa/fr) by language, as the eSpeak program does.
    expect(espeakVoiceFor("fr-FR")).toBe("fr-fr");
    const french = await runner.run({ text: "Bonjour tout le monde.", voice: "fr-fr", wordsPerMinute: 175 });
    expect(french.events.map((e) => e.phoneme).join("")).toContain("ʁ");
    expect(rms(french.pcm)).toBeGreaterThan(500);
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

  it("prepares a session's voice once its start is past, once per voice, and nothing once it is closed", async () => {
    const prepared = vi.spyOn(EspeakRunner.prototype, "prepare").mockImplementation(() => {});
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const local = new LocalEspeakSynthesizer({ prepareAfterMs: 5000 });
    try {
      local.prepare("fr-FR");
      local.prepare("fr-FR");
      local.prepare();
      vi.advanceTimersByTime(4999);
      expect(prepared).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(prepared.mock.calls).toEqual([[espeakVoiceFor("fr-FR")], [espeakVoiceFor(undefined)]]);
      local.prepare("de");
      await local.close();
      local.prepare("it");
      vi.advanceTimersByTime(5000);
      expect(prepared).toHaveBeenCalledTimes(2);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      prepared.mockRestore();
    }
  });

  it("fails the runs of a closed runner, the running one too", async () => {
    const closing = new EspeakRunner(1);
    const job = { text: "A sentence that is still being spoken.", voice: "en-us", wordsPerMinute: 175 };
    const running = expect(closing.run(job)).rejects.toMatchObject({ kind: "unavailable" });
    const waiting = expect(closing.run(job)).rejects.toMatchObject({ kind: "unavailable" });
    await closing.close();
    await Promise.all([running, waiting]);
  });

  it("speaks in a process of its own below this one's priority; one killed fails its run, the next is spoken", async () => {
    const own = new EspeakRunner(1);
    const before = espeakWorkers();
    own.prepare("en-us");
    const [worker] = espeakWorkers().filter((pid) => !before.includes(pid));
    if (worker === undefined) throw new Error("no eSpeak worker process");
    expect(getPriority(worker)).toBe(Math.min(19, getPriority() + SYNTHESIS_NICENESS));
    const job = { text: "A sentence that is still being spoken.", voice: "en-us", wordsPerMinute: 175 };
    const running = own.run(job);
    process.kill(worker, "SIGKILL");
    await expect(running).rejects.toMatchObject({ kind: "unavailable", message: /killed by SIGKILL/ });
    expect((await own.run(job)).pcm.length).toBeGreaterThan(1000);
    await own.close();
    expect(espeakWorkers().filter((pid) => !before.includes(pid))).toEqual([]);
  });

  it("closes in a process with nothing else to do: close() resolves once its worker has exited", () => {
    // An idle worker does not keep the process alive; while closing it must, or close() never resolves
    // (the process ends with the await unsettled, exit code 13).
    const runner = new URL("../src/tts/espeak-runner.ts", import.meta.url).href;
    const script = `import { EspeakRunner } from ${JSON.stringify(runner)};
      const r = new EspeakRunner(1);
      await r.run({ text: "Hi.", voice: "en-us", wordsPerMinute: 175 });
      await r.close();
      console.log("closed");`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect({ status: run.status, stdout: run.stdout.trim() }).toEqual({ status: 0, stdout: "closed" });
  });

  it("reports a failing run as a ProviderError and keeps working", async () => {
    await expect(runner.run({ text: "hi", voice: "xx-yy", wordsPerMinute: 175 })).rejects.toMatchObject({
      provider: "localEspeak",
      kind: "unavailable",
      message: expect.stringMatching(/voice does not exist/),
    });
    expect(
      (await runner.run({ text: "hi", voice: "en-us", wordsPerMinute: 175 })).pcm.length,
    ).toBeGreaterThan(1000);
  });
});

describe("a resettable eSpeak engine", () => {
  const job = (text: string, wordsPerMinute = 175, voice = "en-us"): EspeakJob => ({
    text,
    voice,
    wordsPerMinute,
  });
  const fresh = async (j: EspeakJob) => speakFresh(await createEngine(), j);

  it("gives on every run exactly what a fresh engine gives, whatever ran before", async () => {
    const engine = await createResettableEngine("en-us");
    if (!engine) throw new Error("no en-us engine");
    const jobs = [
      job("Hello there!"),
      job("Watch my mouth move while you hear my voice, sss shh fff."),
      job("A & B < C > D: 1234 words, naïve café, rhythm and psychology. ".repeat(6)),
      job("Thank you for watching.", 300),
    ];
    const expected = await Promise.all(jobs.map(fresh));
    // Each job twice, in an order that puts a different one before each (an engine reused without the
    // reset speaks the second of two runs differently from the first).
    for (const i of [0, 1, 2, 3, 2, 0, 3, 1]) {
      const spoken = engine.speak(jobs[i] as EspeakJob);
      expect(spoken.pcm.length).toBe(expected[i]?.pcm.length);
      expect(
        Buffer.from(spoken.pcm.buffer).equals(Buffer.from(expected[i]?.pcm.buffer ?? new ArrayBuffer(0))),
      ).toBe(true);
      expect(spoken.events).toEqual(expected[i]?.events);
    }
  });

  it("speaks its own voice only; a text longer than its buffer is spoken as a fresh engine would, and spends it", async () => {
    const french = await createResettableEngine("fr-fr");
    if (!french) throw new Error("no fr-fr engine");
    expect(french.speak(job("Bonjour.", 175, "fr-fr"))).toEqual(await fresh(job("Bonjour.", 175, "fr-fr")));
    expect(() => french.speak(job("Hello."))).toThrow(/speaks fr-fr, not en-us/);
    // The engine's text is the text, " ." and a NUL: RESETTABLE_TEXT_BYTES in all.
    const longest = job(`Oui.${"\u200b".repeat((RESETTABLE_TEXT_BYTES - 3 - 4) / 3)}`, 175, "fr-fr");
    expect(Buffer.byteLength(longest.text) + 3).toBe(RESETTABLE_TEXT_BYTES);
    expect(french.speak(longest)).toEqual(await fresh(longest));
    expect(french.spent).toBe(false);
    const longer = { ...longest, text: `${longest.text}${"\u200b".repeat(200)}` };
    expect(french.speak(longer)).toEqual(await fresh(longer));
    expect(french.spent).toBe(true);
    expect(() => french.speak(job("Bonjour.", 175, "fr-fr"))).toThrow(/can no longer be reset/);
    expect(await createResettableEngine("xx-yy")).toBeUndefined();
  });

  it("in a worker, speaks after a text that spent its engine as a fresh engine would", async () => {
    // Zero-width spaces: 3 bytes each, spoken as nothing.
    const long = job(`Hello there.${"\u200b".repeat(RESETTABLE_TEXT_BYTES / 3)}`);
    const spoken = await runner.run(long);
    expect(spoken).toEqual(await fresh(long));
    expect(rms(spoken.pcm)).toBeGreaterThan(500);
    for (const text of ["Goodbye.", "See you soon."])
      expect(await runner.run(job(text))).toEqual(await fresh(job(text)));
  });

  it("in a worker warmed up with a voice, speaks the first job as a fresh engine would", async () => {
    const warmed = new EspeakRunner(1);
    try {
      // The worker prepares en-us's engine by speaking a sentence of its own first.
      warmed.prepare("en-us");
      const first = job("Watch my mouth move while you hear my voice.");
      expect(await warmed.run(first)).toEqual(await fresh(first));
    } finally {
      await warmed.close();
    }
  });
});
