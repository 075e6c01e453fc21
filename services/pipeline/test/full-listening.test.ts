import { InteractivityType } from "@avatar/contracts/common";
import { LocalEspeakSynthesizer } from "@avatar/providers";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChatCompletionsServer } from "../../../packages/providers/test/servers/chat-completions-server.js";
import type { WsTestServer } from "../../../packages/providers/test/servers/realtime-peer-transport.js";
import {
  results,
  type SttVendor1Peer,
  startSttVendor1Server,
} from "../../../packages/providers/test/servers/stt-vendor1-server.js";
import { VendorATtsServer } from "../../../packages/providers/test/servers/vendor-a-tts-server.js";
import type { FullMode } from "../src/full/index.js";
import { audioEvents, clientEvent, RecordingSession, silence } from "./full-harness.js";
import { startFull } from "./full-rig.js";
import { FakeServices } from "./providers-fakes.js";

const SENTENCE_MS = 2000;
let speech: Uint8Array;
let chat: ChatCompletionsServer;
let tts: VendorATtsServer;
let stt: WsTestServer<SttVendor1Peer>;
let env: Record<string, string>;
let fakes: FakeServices;
const modes: FullMode[] = [];

beforeAll(async () => {
  // Real speech for the voice-activity detector: the local synthesizer saying a sentence.
  const espeak = new LocalEspeakSynthesizer();
  const parts: Uint8Array[] = [];
  for await (const pcm of espeak.synthesize({
    text: "Hello there, how are you today",
    voiceId: "",
    settings: {},
  })) {
    parts.push(pcm);
  }
  await espeak.close();
  speech = new Uint8Array(Buffer.concat(parts));
  chat = await ChatCompletionsServer.start({ apiKey: "managed-b" });
  const audio = new Uint8Array((24_000 * 2 * SENTENCE_MS) / 1000).fill(5);
  tts = await new VendorATtsServer({ apiKey: "managed-a", audio, chunkBytes: 9600 }).start();
  stt = await startSttVendor1Server("stt-key");
});
afterAll(async () => {
  await chat.close();
  await tts.stop();
  await stt.close();
});
beforeEach(() => {
  fakes = new FakeServices();
  env = {
    PROVIDER_VENDORA_URL: tts.baseUrl,
    PROVIDER_VENDORA_API_KEY: "managed-a",
    PROVIDER_VENDORB_URL: chat.baseUrl,
    PROVIDER_VENDORB_API_KEY: "managed-b",
    PROVIDER_STTVENDOR1_URL: new URL(stt.url).origin,
    PROVIDER_STTVENDOR1_API_KEY: "stt-key",
  };
});
afterEach(async () => {
  for (const mode of modes.splice(0)) await mode.stop();
});

function run(config: ConstructorParameters<typeof RecordingSession>[0] = {}, environment = env) {
  const session = new RecordingSession({ voiceId: fakes.addVoice({ vendorA: "va" }), ...config });
  const mode = startFull(session, environment, fakes);
  modes.push(mode);
  mode.onConnected("conn-1", true);
  const say = (pcm: Uint8Array) => {
    for (const event of audioEvents(pcm)) mode.handle(event);
  };
  return { session, mode, say };
}

describe("the user's speech", () => {
  it("is detected, transcribed (partials, then the final text) and answered", async () => {
    const { session, say } = run();
    const peerReady = stt.nextPeer();
    say(silence(500));
    say(speech);
    await session.waitFor("user.speak_started");
    const peer = await peerReady;

    // Results come once the recognizer has audio, as with the real service.
    await peer.received.waitFor((frame) => frame.kind === "binary");
    peer.sendResults("hello");
    expect((await session.waitFor("user.transcription.chunk")).text).toBe("hello");
    peer.sendResults("hello there", { isFinal: true });
    await session.waitFor("user.transcription.chunk", { match: (e) => e.text === "hello there" });
    peer.flushOnClose.push(results("how are you", { isFinal: true }));
    chat.enqueue({ kind: "stream", pieces: ["I am well, thank you."] });
    say(silence(1000));

    await session.waitFor("user.speak_ended");
    const final = await session.waitFor("user.transcription");
    expect(final.text).toBe("hello there how are you");
    await session.waitFor("avatar.speak_ended");

    expect(session.ofType("user.speak_started")).toHaveLength(1);
    expect(session.ofType("user.transcription.chunk").map((e) => e.text)).toEqual([
      "hello",
      "hello there",
      "hello there how are you",
    ]);
    expect(session.transcript.map((e) => [e.role, e.transcript])).toEqual([
      ["user", "hello there how are you"],
      ["avatar", "I am well, thank you."],
    ]);
    const userEntry = session.transcript[0];
    const started = session.ofType("user.speak_started")[0];
    expect(Number(userEntry?.absoluteTimestamp)).toBeLessThanOrEqual(started?.at ?? 0);
    const messages = chat.requests.at(-1)?.body?.messages as { role: string; content: string }[];
    expect(messages.at(-1)).toEqual({ role: "user", content: "hello there how are you" });

    // Recognition got the speech from its beginning (pre-roll included) and the protocol was kept.
    expect(peer.audio.length).toBeGreaterThanOrEqual(speech.length);
    expect(peer.messages).toEqual([{ type: "CloseStream" }]);
    expect(peer.violations).toEqual([]);
    expect(session.types(["error", "warning"])).toEqual([]);
  });

  it("interrupts the avatar (barge-in) and the transcript keeps only what it had said", async () => {
    const { session, mode, say } = run({}, { ...env, PROVIDER_STTVENDOR1_URL: "" });
    mode.handle(clientEvent("avatar.repeat", { text: "One two. Three four. Five six." }));
    const started = await session.waitFor("avatar.speak_started");
    say(silence(300));
    await new Promise((resolve) => setTimeout(resolve, started.at + 1.5 * SENTENCE_MS - Date.now()));
    say(speech);
    const userStarted = await session.waitFor("user.speak_started");
    const ended = await session.waitFor("avatar.speak_ended");
    expect(ended.interrupted).toBe(true);
    expect(ended.at - userStarted.at).toBeLessThan(500);
    expect(session.ofType("avatar.transcription").at(-1)).toMatchObject({
      text: "One two.",
      interrupted: true,
    });
    expect(session.transcript.map((e) => [e.role, e.transcript])).toEqual([["avatar", "One two."]]);

    // No recognizer is configured: one warning, on the first user audio, however much audio follows.
    say(silence(800));
    say(speech);
    say(silence(800));
    await session.waitFor("user.speak_ended", { from: session.events.indexOf(ended) });
    expect(session.ofType("warning")).toEqual([
      expect.objectContaining({
        warning: expect.objectContaining({ type: "speech_recognition_unavailable" }),
      }),
    ]);
    expect(session.ofType("user.transcription")).toEqual([]);
  });

  it("a recognizer refusing with 429 is a warning; the next utterance is transcribed", async () => {
    const { session, say } = run();
    stt.refuseNext({ status: 429, headers: { "retry-after": "3" }, body: { err_code: "TOO_MANY_REQUESTS" } });
    say(silence(300));
    say(speech);
    say(silence(800));
    const warning = await session.waitFor("warning");
    expect(warning.warning).toMatchObject({
      type: "rate_limited",
      message: expect.stringContaining("speech recognition"),
    });
    expect(session.ofType("user.transcription")).toEqual([]);

    const peerReady = stt.nextPeer();
    say(speech);
    const peer = await peerReady;
    peer.flushOnClose.push(results("second try", { isFinal: true }));
    chat.enqueue({ kind: "stream", pieces: ["Heard you."] });
    say(silence(800));
    expect((await session.waitFor("user.transcription")).text).toBe("second try");
    await session.waitFor("avatar.speak_ended");
  });

  it("is ignored while the avatar is not listening", async () => {
    const { session, mode, say } = run();
    mode.handle(clientEvent("avatar.stop_listening"));
    expect(session.ofType("agent.state_updated").at(-1)).toMatchObject({
      state: "idle",
      previous_state: "listening",
    });
    say(speech);
    say(silence(800));
    expect(session.ofType("user.speak_started")).toEqual([]);
    mode.handle(clientEvent("avatar.start_listening"));
    expect(session.ofType("agent.state_updated").at(-1)).toMatchObject({
      state: "listening",
      previous_state: "idle",
    });
    const peerReady = stt.nextPeer();
    say(speech);
    await session.waitFor("user.speak_started");
    (await peerReady).flushOnClose.push(results("now", { isFinal: true }));
    mode.handle(clientEvent("avatar.stop_listening"));
    // Stopping listening ends the open utterance unanswered.
    await session.waitFor("user.speak_ended");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(session.ofType("user.transcription")).toEqual([]);
  });
});

describe("turn metrics", () => {
  it("an answer to speech measures transcript, first token, first audio and the mouth-open frame, in order", async () => {
    const { session, say } = run();
    const peerReady = stt.nextPeer();
    say(silence(500));
    say(speech);
    const peer = await peerReady;
    await peer.received.waitFor((frame) => frame.kind === "binary");
    peer.flushOnClose.push(results("how are you", { isFinal: true }));
    chat.enqueue({ kind: "stream", pieces: ["Fine, ", "thanks."] });
    say(silence(1000));

    const speakEnded = await session.waitFor("user.speak_ended");
    const transcribed = await session.waitFor("user.transcription");
    const audioStarted = await session.waitFor("avatar.speak_started");
    // The renderer's frames: a closed mouth first, then an open one (the media code reports them).
    session.turnMetrics.videoFrame({ at: audioStarted.at + 5, mouthOpen: 0.05 });
    session.turnMetrics.videoFrame({ at: audioStarted.at + 45, mouthOpen: 0.6 });
    session.turnMetrics.videoFrame({ at: audioStarted.at + 85, mouthOpen: 0.9 });
    await session.waitFor("avatar.speak_ended");

    const [event] = session.turnMetricsEvents;
    expect(session.turnMetricsEvents).toHaveLength(1);
    expect(event).toMatchObject({ type: "session.turn_metrics", trigger: "user_speech", interrupted: false });
    const latency = event?.latency_ms as Record<
      "final_transcript" | "first_llm_token" | "first_audio" | "first_mouth_open_frame",
      number
    >;
    const started = event?.started_at as number;
    expect(Math.abs(started - speakEnded.at)).toBeLessThanOrEqual(5);
    expect(Math.abs(started + latency.final_transcript - transcribed.at)).toBeLessThanOrEqual(5);
    expect(Math.abs(started + latency.first_audio - audioStarted.at)).toBeLessThanOrEqual(5);
    expect(latency.first_mouth_open_frame).toBe(audioStarted.at + 45 - started);
    expect(latency.final_transcript).toBeGreaterThanOrEqual(0);
    expect(latency.first_llm_token).toBeGreaterThanOrEqual(latency.final_transcript);
    expect(latency.first_audio).toBeGreaterThanOrEqual(latency.first_llm_token);
    expect(latency.first_mouth_open_frame).toBeGreaterThanOrEqual(latency.first_audio);
    // Kept among the session's events with the same figures.
    expect(session.stored).toEqual([
      {
        id: event?.turn_id,
        type: "session.turn_metrics",
        payload: expect.objectContaining({
          turn_id: event?.turn_id,
          latency_ms: latency,
          source_event_id: null,
        }),
      },
    ]);
  });

  it("avatar.repeat: no transcript or model stages; without video the frame stage is null", async () => {
    const { session, mode } = run({}, { ...env, PROVIDER_STTVENDOR1_URL: "" });
    const request = clientEvent("avatar.repeat", { text: "Hello." });
    mode.handle(request);
    await session.waitFor("avatar.speak_ended");
    const [event] = session.turnMetricsEvents;
    expect(event).toMatchObject({
      trigger: "avatar.repeat",
      sourceEventId: request.eventId,
      latency_ms: { final_transcript: null, first_llm_token: null, first_mouth_open_frame: null },
    });
    expect((event?.latency_ms as Record<string, number> | undefined)?.first_audio).toBeGreaterThanOrEqual(0);
  });
});

describe("bad audio", () => {
  it("gets an error event naming the problem, and the session goes on", async () => {
    const { session, mode, say } = run({}, { ...env, PROVIDER_STTVENDOR1_URL: "" });
    const cases = [
      clientEvent("user.audio", { audio: "not base64!" }),
      clientEvent("user.audio", { audio: "AA==" }),
      clientEvent("user.audio", { audio: 42 }),
      clientEvent("user.audio", {}),
    ];
    for (const event of cases) mode.handle(event);
    const errors = session.ofType("error");
    expect(errors.map((e) => [e.sourceEventId, e.connectionId, (e.error as { type: string }).type])).toEqual(
      cases.map((c) => [c.eventId, "conn-1", "invalid_audio"]),
    );
    const messages = errors.map((e) => (e.error as { message: string }).message);
    expect(messages[0]).toContain("base64");
    expect(messages[1]).toContain("16-bit");
    say(silence(200));
    say(speech);
    await session.waitFor("user.speak_started");
  });
});

describe("push-to-talk", () => {
  const ptt = { interactivityType: InteractivityType.PUSH_TO_TALK };

  it("acknowledges start and stop, and takes audio only between them", async () => {
    const { session, mode, say } = run(ptt);
    expect(session.ofType("agent.state_updated")).toEqual([]);

    const early = clientEvent("user.stop_push_to_talk");
    mode.handle(early);
    expect(session.ofType("user.push_to_talk_stop_failed")).toEqual([
      expect.objectContaining({
        sourceEventId: early.eventId,
        reason: expect.stringContaining("not started"),
      }),
    ]);
    say(speech);
    say(silence(800));
    expect(session.ofType("user.speak_started")).toEqual([]);

    const peerReady = stt.nextPeer();
    const start = clientEvent("user.start_push_to_talk");
    mode.handle(start);
    expect(session.ofType("user.push_to_talk_started")).toEqual([
      expect.objectContaining({ sourceEventId: start.eventId }),
    ]);
    expect(session.ofType("agent.state_updated").at(-1)).toMatchObject({
      state: "listening",
      previous_state: "idle",
    });
    const again = clientEvent("user.start_push_to_talk");
    mode.handle(again);
    expect(session.ofType("user.push_to_talk_start_failed")).toEqual([
      expect.objectContaining({ sourceEventId: again.eventId, reason: expect.stringContaining("already") }),
    ]);

    // Pauses inside the push do not end the utterance.
    say(speech);
    say(silence(1500));
    say(speech);
    const peer = await peerReady;
    peer.flushOnClose.push(results("one long thought", { isFinal: true }));
    chat.enqueue({ kind: "stream", pieces: ["Understood."] });
    const stop = clientEvent("user.stop_push_to_talk");
    mode.handle(stop);
    expect(session.ofType("user.push_to_talk_stopped")).toEqual([
      expect.objectContaining({ sourceEventId: stop.eventId }),
    ]);
    expect(session.ofType("user.speak_started")).toHaveLength(1);
    expect(session.ofType("user.speak_ended")).toHaveLength(1);
    expect((await session.waitFor("user.transcription")).text).toBe("one long thought");
    await session.waitFor("avatar.speak_ended");
    expect(peer.audio.length).toBe(2 * speech.length + silence(1500).length);
    say(speech);
    expect(session.ofType("user.speak_started")).toHaveLength(1);
  });

  it("fails both acknowledgements in a conversational session", () => {
    const { session, mode } = run();
    const start = clientEvent("user.start_push_to_talk");
    const stop = clientEvent("user.stop_push_to_talk");
    mode.handle(start);
    mode.handle(stop);
    expect(session.ofType("user.push_to_talk_start_failed")).toEqual([
      expect.objectContaining({
        sourceEventId: start.eventId,
        reason: expect.stringContaining("CONVERSATIONAL"),
      }),
    ]);
    expect(session.ofType("user.push_to_talk_stop_failed")).toEqual([
      expect.objectContaining({
        sourceEventId: stop.eventId,
        reason: expect.stringContaining("CONVERSATIONAL"),
      }),
    ]);
    expect(session.ofType("user.push_to_talk_started")).toEqual([]);
  });

  it("a push while the avatar talks interrupts it", async () => {
    const { session, mode } = run(ptt);
    mode.handle(clientEvent("avatar.repeat", { text: "A long sentence to speak. And another one." }));
    await session.waitFor("avatar.speak_started");
    mode.handle(clientEvent("user.start_push_to_talk"));
    const ended = await session.waitFor("avatar.speak_ended");
    expect(ended.interrupted).toBe(true);
    expect(session.transcript).toEqual([]);
  });
});
