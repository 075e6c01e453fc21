import { LocalEspeakSynthesizer, speechOf } from "@avatar/providers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VendorATtsServer } from "../../../packages/providers/test/servers/vendor-a-tts-server.js";
import type { FullMode } from "../src/full/index.js";
import { clientEvent, durationMs, RecordingSession } from "./full-harness.js";
import { startFull } from "./full-rig.js";
import { FakeServices } from "./providers-fakes.js";

const modes: FullMode[] = [];
afterEach(async () => {
  for (const mode of modes.splice(0)) await mode.stop();
});

function run(
  session: RecordingSession,
  env: Record<string, string> = {},
  fakes = new FakeServices(),
): FullMode {
  const mode = startFull(session, env, fakes);
  modes.push(mode);
  return mode;
}

/** How long the local synthesizer's audio for `text` lasts. */
async function espeakDurationMs(text: string): Promise<number> {
  const espeak = new LocalEspeakSynthesizer();
  let bytes = 0;
  for await (const { pcm } of speechOf(espeak, { text, voiceId: "", settings: {}, language: "en" }))
    bytes += pcm.length;
  await espeak.close();
  return durationMs(bytes);
}

describe("avatar.repeat in a sandbox session (local synthesizer)", () => {
  it("speaks the text as given, with speak_ended one audio-duration after speak_started", async () => {
    const text = "Hello there. This is the local voice speaking.";
    const expected = await espeakDurationMs(text);
    expect(expected).toBeGreaterThan(1000);

    const session = new RecordingSession({ isSandbox: true, voiceId: "voice-1" });
    const mode = run(session);
    mode.onConnected("conn-1", true);
    const repeat = clientEvent("avatar.repeat", { text });
    const asked = Date.now();
    mode.handle(repeat);

    const started = await session.waitFor("avatar.speak_started");
    const ended = await session.waitFor("avatar.speak_ended", { timeoutMs: expected + 20_000 });
    const played = ended.at - started.at;
    // Never before the audio has played; late only by scheduling and rendering gaps (generous bound).
    expect(played).toBeGreaterThanOrEqual(expected - 20);
    expect(played).toBeLessThan(expected + 3000);

    for (const e of [started, ended, ...session.ofType("avatar.transcription")]) {
      expect(e.sourceEventId).toBe(repeat.eventId);
    }
    expect(session.ofType("avatar.transcription.chunk").map((e) => e.text)).toEqual([text]);
    expect(session.ofType("avatar.transcription")).toEqual([
      expect.objectContaining({ text, interrupted: false }),
    ]);
    expect(ended.interrupted).toBe(false);
    expect(session.ofType("agent.state_updated").map((e) => [e.previous_state, e.state])).toEqual([
      ["idle", "listening"],
      ["listening", "talking"],
      ["talking", "listening"],
    ]);
    expect(session.transcript).toEqual([expect.objectContaining({ role: "avatar", transcript: text })]);
    const entry = session.transcript[0];
    // Stamped when the speech began (read just before speak_started is sent), not when written after
    // speak_ended. Bounds by order, not by a margin: a GC pause between the two readings is not a bug.
    expect(Number(entry?.absoluteTimestamp)).toBeGreaterThanOrEqual(asked);
    expect(Number(entry?.absoluteTimestamp)).toBeLessThanOrEqual(started.at);
    expect(session.types(["error", "warning"])).toEqual([]);
    // The avatar's media got all of that audio with what is said when (eSpeak's phonemes), then the end.
    expect(durationMs(session.avatar.spokenBytes)).toBeCloseTo(expected, 0);
    expect(session.avatar.kinds.at(-1)).toBe("end");
    const marks = session.avatar.calls.flatMap((c) => (c.kind === "speak" ? (c.phonemes ?? []) : []));
    expect(marks.length).toBeGreaterThan(10);
    expect(marks.every((m) => m.startMs >= 0 && m.durationMs >= 0)).toBe(true);
  });

  it("speaks requests one after another, in order", async () => {
    const session = new RecordingSession({ isSandbox: true, voiceId: "voice-1" });
    const mode = run(session);
    mode.onConnected("conn-1", true);
    const first = clientEvent("avatar.speak_text", { text: "First." });
    const second = clientEvent("avatar.repeat", { text: "Second." });
    mode.handle(first);
    mode.handle(second);
    await session.waitFor("avatar.speak_ended", { match: (e) => e.sourceEventId === second.eventId });
    const speech = session.events.filter((e) => e.type.startsWith("avatar.speak"));
    expect(speech.map((e) => [e.type, e.sourceEventId])).toEqual([
      ["avatar.speak_started", first.eventId],
      ["avatar.speak_ended", first.eventId],
      ["avatar.speak_started", second.eventId],
      ["avatar.speak_ended", second.eventId],
    ]);
    expect(session.transcript.map((e) => e.transcript)).toEqual(["First.", "Second."]);
  });

  it("refuses a repeat without text with an error event, and goes on", async () => {
    const session = new RecordingSession({ isSandbox: true, voiceId: "voice-1" });
    const mode = run(session);
    mode.onConnected("conn-1", true);
    const bad = clientEvent("avatar.repeat", { text: "   " });
    mode.handle(bad);
    expect(session.ofType("error")).toEqual([
      expect.objectContaining({
        sourceEventId: bad.eventId,
        connectionId: "conn-1",
        error: { type: "invalid_event", message: expect.stringContaining("text") },
      }),
    ]);
    mode.handle(clientEvent("avatar.repeat", { text: "Still here." }));
    await session.waitFor("avatar.speak_ended");
  });
});

describe("the opening text", () => {
  it("is spoken on the first connect (variables already filled in) and not again on a reconnect", async () => {
    const session = new RecordingSession({
      isSandbox: true,
      voiceId: "voice-1",
      openingText: "Welcome back, Ada.",
      dynamicVariables: { values: { name: { kind: { case: "stringValue", value: "Ada" } } } },
    });
    const mode = run(session);
    mode.onConnected("conn-1", true);
    const ended = await session.waitFor("avatar.speak_ended");
    expect(ended.sourceEventId).toBeNull();
    expect(session.ofType("avatar.transcription")).toEqual([
      expect.objectContaining({ text: "Welcome back, Ada.", sourceEventId: null }),
    ]);

    const before = session.events.length;
    mode.onConnected("conn-2", false);
    expect(session.events.slice(before)).toEqual([
      expect.objectContaining({ type: "agent.state_updated", state: "listening", connectionId: "conn-2" }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(session.ofType("avatar.speak_started")).toHaveLength(1);
    expect(session.transcript.map((e) => e.transcript)).toEqual(["Welcome back, Ada."]);
  });
});

describe("interrupting the avatar (vendorA synthesis on a local server)", () => {
  const SENTENCE_MS = 2000;
  let tts: VendorATtsServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    // Every sentence comes back as SENTENCE_MS of audio.
    const audio = new Uint8Array((24_000 * 2 * SENTENCE_MS) / 1000).map((_, i) => (i % 2 ? 8 : 0));
    tts = await new VendorATtsServer({ apiKey: "managed-a", audio, chunkBytes: 9600 }).start();
    env = { PROVIDER_VENDORA_URL: tts.baseUrl, PROVIDER_VENDORA_API_KEY: "managed-a" };
  });
  afterAll(async () => {
    await tts.stop();
  });

  it("ends the turn at once and keeps only the sentences whose audio played", async () => {
    const fakes = new FakeServices();
    const voiceId = fakes.addVoice({ vendorA: "provider-voice-7" });
    const session = new RecordingSession({
      voiceId,
      voiceSettings: {
        provider: { case: "vendorA", value: { model: "vendorA_flash_v2_5", stability: 0.5, speed: 1 } },
      },
    });
    const mode = run(session, env, fakes);
    mode.onConnected("conn-1", true);
    const repeat = clientEvent("avatar.repeat", { text: "One two. Three four. Five six." });
    mode.handle(repeat);
    const started = await session.waitFor("avatar.speak_started");

    // Halfway through the second sentence: the first has played, the second has not finished.
    await new Promise((resolve) => setTimeout(resolve, started.at + 1.5 * SENTENCE_MS - Date.now()));
    const interruptAt = Date.now();
    mode.handle(clientEvent("avatar.interrupt"));
    const ended = await session.waitFor("avatar.speak_ended");
    expect(ended.at - interruptAt).toBeLessThan(500);
    // The avatar's media went silent in the same moment as the turn (no end of utterance after it).
    const silenced = session.avatar.calls.find((c) => c.kind === "interrupt");
    expect(silenced?.at).toBeLessThanOrEqual(ended.at);
    expect(session.avatar.kinds.at(-1)).toBe("interrupt");
    expect(ended).toMatchObject({ interrupted: true, sourceEventId: repeat.eventId });
    expect(session.ofType("avatar.transcription")).toEqual([
      expect.objectContaining({ text: "One two.", interrupted: true }),
    ]);
    expect(session.transcript.map((e) => [e.role, e.transcript])).toEqual([["avatar", "One two."]]);
    expect(session.ofType("agent.state_updated").at(-1)?.state).toBe("listening");

    // The provider saw the catalog voice's own id and the session's settings.
    expect(tts.connections[0]?.url.pathname).toBe("/v1/text-to-speech/provider-voice-7/stream-input");
    expect(tts.connections[0]?.messages[0]).toMatchObject({ voice_settings: { stability: 0.5 } });
    expect(tts.violations).toEqual([]);
  });

  it("an interrupt with nothing playing changes nothing", async () => {
    const fakes = new FakeServices();
    const session = new RecordingSession({ voiceId: fakes.addVoice({ vendorA: "v" }) });
    const mode = run(session, env, fakes);
    mode.onConnected("conn-1", true);
    const before = session.events.length;
    mode.handle(clientEvent("avatar.interrupt"));
    expect(session.events.length).toBe(before);
  });
});
