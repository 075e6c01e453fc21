import { setImmediate as nextTurn } from "node:timers/promises";
import type { SpeechSynthesizer } from "@avatar/providers";
import { describe, expect, it } from "vitest";
import { decodeUserAudio } from "../src/full/audio-input.js";
import { FullMode, readFullModeOptions } from "../src/full/index.js";
import { Playout, playoutClock } from "../src/full/playout.js";
import { RecentAudio } from "../src/full/recent-audio.js";
import { SentenceBuffer } from "../src/full/sentence-buffer.js";
import type { SessionProviders } from "../src/providers/session-providers.js";
import { clientEvent, RecordingSession } from "./full-harness.js";
import { ManualClock } from "./manual-clock.js";
import { FakeServices } from "./providers-fakes.js";

describe("Playout", () => {
  it("plays pushed audio back to back in real time, resuming after a gap", async () => {
    const clock = new ManualClock();
    const playout = new Playout(playoutClock(clock));
    const t0 = clock.now();
    expect(playout.push(48_000)).toBe(t0 + 1000);
    expect(playout.push(24_000)).toBe(t0 + 1500);
    clock.advance(2000);
    // Synthesis fell behind: the next audio starts now, not where the last ended.
    expect(playout.push(4_800)).toBe(t0 + 2100);

    let drained = false;
    void playout.drained().then(() => {
      drained = true;
    });
    clock.advance(99);
    await nextTurn();
    expect(drained).toBe(false);
    clock.advance(1);
    await nextTurn();
    expect(drained).toBe(true);
  });

  it("stops waiting when the signal aborts", async () => {
    const clock = new ManualClock();
    const playout = new Playout(playoutClock(clock));
    playout.push(48_000);
    const controller = new AbortController();
    const waiting = playout.drained(controller.signal);
    controller.abort(new Error("interrupted"));
    await expect(waiting).rejects.toThrow("interrupted");
    expect(clock.pending).toBe(0);
  });
});

describe("SentenceBuffer", () => {
  it("hands out sentences once the next one begins, keeping the spaces between pieces", () => {
    const buffer = new SentenceBuffer();
    expect(buffer.push("Hello")).toEqual([]);
    expect(buffer.push(" there. How ")).toEqual(["Hello there."]);
    expect(buffer.push("are you? Fine")).toEqual(["How are you?"]);
    expect(buffer.push("")).toEqual([]);
    expect(buffer.flush()).toEqual(["Fine"]);
    expect(buffer.flush()).toEqual([]);
  });
});

describe("decodeUserAudio", () => {
  it("takes strict base64 of whole 16-bit samples", () => {
    expect(decodeUserAudio(Buffer.from([1, 2, 3, 4]).toString("base64"))).toEqual({
      ok: true,
      pcm: new Uint8Array([1, 2, 3, 4]),
    });
    expect(decodeUserAudio("")).toEqual({ ok: true, pcm: new Uint8Array() });
    // Odd byte counts; not base64; whitespace, URL-safe characters, a character beyond ASCII read as a letter.
    for (const bad of [
      "AQID",
      "AQ==",
      "AQI",
      "AQ!D",
      "AQ ID",
      "AQ-_",
      "AQ\u0141D",
      "AQ==AQ==",
      null,
      7,
      ["AQID"],
    ]) {
      expect(decodeUserAudio(bad).ok).toBe(false);
    }
  });
});

describe("RecentAudio", () => {
  it("answers the audio from a sample position, within what it keeps", () => {
    const recent = new RecentAudio(4);
    recent.push(new Uint8Array([1, 1, 2, 2]));
    recent.push(new Uint8Array([3, 3, 4, 4, 5, 5]));
    expect(recent.position).toBe(5);
    expect([...recent.since(3)]).toEqual([4, 4, 5, 5]);
    expect([...recent.since(0)]).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    recent.push(new Uint8Array([6, 6, 7, 7, 8, 8]));
    // The oldest chunk has fallen out of the 4 samples kept.
    expect([...recent.since(0)]).toEqual([3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]);
  });
});

describe("readFullModeOptions", () => {
  it("reads the tuning settings with their defaults", () => {
    expect(readFullModeOptions({ FULL_VAD_HANGOVER_MS: "800" })).toEqual({
      vad: { thresholdDb: 10, minSpeechLevelDb: -55, startMs: 100, hangoverMs: 800 },
      maxHistory: 40,
    });
    expect(() => readFullModeOptions({ FULL_VAD_HANGOVER_MS: "5" })).toThrow("FULL_VAD_HANGOVER_MS");
  });
});

describe("what an interrupted turn keeps (hand-moved clock)", () => {
  /** One second of audio per sentence, at once: the playout timeline alone decides what was spoken. */
  const oneSecondPerSentence: SpeechSynthesizer = {
    name: "fixed",
    async *synthesize() {
      yield new Uint8Array(48_000);
    },
  };
  const providers: SessionProviders = {
    synthesizer: async () => ({ synthesizer: oneSecondPerSentence, voiceId: "v", settings: {} }),
    recognizer: async () => null,
    languageModel: async () => null,
    conversation: async () => null,
  };

  async function interruptAfter(ms: number) {
    const clock = new ManualClock();
    const session = new RecordingSession({ isSandbox: true });
    const mode = new FullMode(session, providers, new FakeServices().clients.memory, { clock });
    mode.onConnected("conn-1", true);
    mode.handle(clientEvent("avatar.repeat", { text: "One. Two. Three." }));
    await session.waitFor("avatar.speak_started");
    for (let i = 0; i < 20; i++) await nextTurn();
    clock.advance(ms);
    mode.handle(clientEvent("avatar.interrupt"));
    await session.waitFor("avatar.speak_ended");
    await mode.stop();
    return session;
  }

  it.each([
    [999, ""],
    [1000, "One."],
    [1999, "One."],
    [2000, "One. Two."],
  ])("interrupted %i ms in: the transcript keeps %j", async (ms, kept) => {
    const session = await interruptAfter(ms);
    expect(session.ofType("avatar.transcription")).toEqual([
      expect.objectContaining({ text: kept, interrupted: true }),
    ]);
    expect(session.transcript.map((e) => e.transcript)).toEqual(kept ? [kept] : []);
  });

  it("uninterrupted, speak_ended comes exactly when the last audio has played", async () => {
    const clock = new ManualClock();
    const session = new RecordingSession({ isSandbox: true });
    const mode = new FullMode(session, providers, new FakeServices().clients.memory, { clock });
    mode.onConnected("conn-1", true);
    mode.handle(clientEvent("avatar.repeat", { text: "One. Two." }));
    await session.waitFor("avatar.speak_started");
    for (let i = 0; i < 20; i++) await nextTurn();
    clock.advance(1999);
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(session.ofType("avatar.speak_ended")).toEqual([]);
    clock.advance(1);
    const ended = await session.waitFor("avatar.speak_ended");
    expect(ended.interrupted).toBe(false);
    expect(session.transcript.map((e) => e.transcript)).toEqual(["One. Two."]);
  });
});
