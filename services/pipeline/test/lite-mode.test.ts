import { type SessionConfig, SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import { SessionEndReason, SessionSchema } from "@avatar/contracts/sessions";
import {
  AsyncQueue,
  type Conversation,
  type ConversationEvent,
  type ConversationProvider,
  ProviderError,
} from "@avatar/providers";
import { silentLogger } from "@avatar/runtime";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { liteMode } from "../src/lite/lite-mode.js";
import type { SessionProviders } from "../src/providers/session-providers.js";
import type { ModeHandler, ServerEventInput, SessionContext } from "../src/realtime/mode.js";
import { TurnMetrics } from "../src/realtime/turn-metrics.js";
import { ManualClock } from "./manual-clock.js";
import { RecordingOutput } from "./recording-output.js";

/** A LITE mode on a hand-moved clock, with the events it sends written down. */
function rig(
  config: MessageInitShape<typeof SessionConfigSchema> = {},
  conversation?: FakeConversation,
  maxBufferedMs = 60_000,
) {
  const clock = new ManualClock();
  const t0 = clock.now();
  const sent: (ServerEventInput & { at: number; to?: string })[] = [];
  const ended: SessionEndReason[] = [];
  const transcript: { role: string; transcript: string }[] = [];
  const turnMetrics: (ServerEventInput & { at: number })[] = [];
  const cfg: SessionConfig = create(SessionConfigSchema, { mode: SessionMode.LITE, ...config });
  const avatar = new RecordingOutput(() => clock.now() - t0);
  const ctx: SessionContext = {
    sessionId: "s1",
    spaceId: "space",
    session: create(SessionSchema, { id: "s1" }),
    config: cfg,
    log: silentLogger,
    avatar,
    send: (event, to) => sent.push({ ...event, at: clock.now() - t0, ...(to ? { to } : {}) }),
    sendError: (type, message, sourceEventId, to) =>
      ctx.send({ type: "error", sourceEventId: sourceEventId ?? null, error: { type, message } }, to),
    sendWarning: (type, message, sourceEventId) =>
      ctx.send({ type: "warning", sourceEventId: sourceEventId ?? null, warning: { type, message } }),
    appendTranscript: (entries) => transcript.push(...entries),
    turnMetrics: new TurnMetrics({
      mode: "LITE",
      now: clock.now,
      send: (event) => turnMetrics.push({ ...event, at: clock.now() - t0 }),
      store: () => {},
    }),
    end: async (reason) => {
      ended.push(reason);
    },
    now: clock.now,
    sinceStart: () => clock.now() - t0,
  };
  const providers: SessionProviders = {
    synthesizer: () => Promise.reject(new Error("unused")),
    recognizer: async () => null,
    languageModel: async () => null,
    conversation: async () =>
      conversation ? { provider: conversation.provider, options: { apiKey: "k", agentId: "a" } } : null,
  };
  const mode = liteMode(() => providers, { maxBufferedMs }, clock)(ctx) as ModeHandler;
  let n = 0;
  const event = (type: string, payload: Record<string, unknown> = {}, eventId: string | null = null) =>
    mode.handle({ type, eventId, payload: { type, ...payload }, connectionId: "c1" });
  const types = () => sent.map((e) => `${e.at} ${e.type}${e.sourceEventId ? ` ${e.sourceEventId}` : ""}`);
  return { clock, sent, ended, transcript, avatar, turnMetrics, mode, event, types, next: () => `e${++n}` };
}

/** `ms` of 24 kHz 16-bit audio, base64. */
const audio = (ms: number) => Buffer.alloc(ms * 48).toString("base64");

describe("LITE mode", () => {
  it("acknowledges every chunk, starts at the first audio and ends one audio-duration later", () => {
    const { clock, event, types, sent } = rig();
    event("agent.speak", { audio: audio(600), event_id: "u1" }, "u1");
    clock.advance(300);
    event("agent.speak", { audio: audio(400), event_id: "c2" }, "c2");
    event("agent.speak_end", { event_id: "end1" }, "end1");
    clock.advance(699);
    expect(types()).toEqual([
      "0 agent.audio_buffer_appended u1",
      "0 agent.speak_started u1",
      "0 agent.state_updated",
      "300 agent.audio_buffer_appended c2",
      "300 agent.audio_buffer_committed end1",
    ]);
    clock.advance(1);
    expect(types().slice(5)).toEqual(["1000 agent.speak_ended u1", "1000 agent.state_updated"]);
    expect(
      sent.filter((e) => e.type === "agent.state_updated").map((e) => [e.previous_state, e.state]),
    ).toEqual([
      ["idle", "talking"],
      ["talking", "idle"],
    ]);
  });

  it("refuses a chunk that would buffer more than the bound ahead of the playout, and takes one as the buffer plays", () => {
    const { clock, event, types, sent } = rig({}, undefined, 2_000);
    event("agent.speak", { audio: audio(1500) }, "u1");
    event("agent.speak", { audio: audio(600) }, "c2");
    clock.advance(200);
    // 1,300 ms left to play: 600 more fit.
    event("agent.speak", { audio: audio(600) }, "c3");
    // 1,900 buffered: the trailing chunk of speak_end does not fit, and the whole event is refused.
    event("agent.speak_end", { audio: audio(200) }, "end1");
    expect(types()).toEqual([
      "0 agent.audio_buffer_appended u1",
      "0 agent.speak_started u1",
      "0 agent.state_updated",
      "0 error c2",
      "200 agent.audio_buffer_appended c3",
      "200 error end1",
    ]);
    const errors = sent
      .filter((e) => e.type === "error")
      .map((e) => e.error as { type: string; message: string });
    expect(errors.map((e) => e.type)).toEqual(["audio_buffer_full", "audio_buffer_full"]);
    expect(errors[0]?.message).toBe(
      "agent.speak: 1.5 s of audio wait to play, and a session buffers at most 2 s; send this chunk again as they play",
    );
    clock.advance(100);
    event("agent.speak_end", { audio: audio(200) }, "end2");
    expect(types().slice(6)).toEqual([
      "300 agent.audio_buffer_appended end2",
      "300 agent.audio_buffer_committed end2",
    ]);
  });

  it("has room again once the buffered audio is interrupted, or has played", () => {
    const { clock, event, types } = rig({}, undefined, 2_000);
    event("agent.speak", { audio: audio(2000) }, "u1");
    event("agent.speak", { audio: audio(100) }, "full1");
    event("agent.interrupt", {}, "stop");
    event("agent.speak_end", { audio: audio(2000) }, "u2");
    event("agent.speak", { audio: audio(100) }, "full2");
    clock.advance(2000);
    event("agent.speak", { audio: audio(2000) }, "u3");
    expect(types().filter((t) => /appended|error/.test(t))).toEqual([
      "0 agent.audio_buffer_appended u1",
      "0 error full1",
      "0 agent.audio_buffer_appended u2",
      "0 error full2",
      "2000 agent.audio_buffer_appended u3",
    ]);
  });

  it("counts the utterances queued behind the playing one towards the bound", () => {
    const { event, types } = rig({}, undefined, 2_000);
    event("agent.speak_end", { audio: audio(1000) }, "u1");
    event("agent.speak", { audio: audio(800) }, "u2");
    event("agent.speak", { audio: audio(300) }, "c3");
    expect(types().filter((t) => t.includes("c3") || t.includes("u2"))).toEqual([
      "0 agent.audio_buffer_appended u2",
      "0 error c3",
    ]);
  });

  it("takes the trailing chunk of speak_end as the utterance's last audio", () => {
    const { clock, event, types } = rig();
    event("agent.speak_end", { audio: audio(500) }, "only");
    expect(types()).toEqual([
      "0 agent.audio_buffer_appended only",
      "0 agent.speak_started only",
      "0 agent.state_updated",
      "0 agent.audio_buffer_committed only",
    ]);
    clock.advance(500);
    expect(types().at(-2)).toBe("500 agent.speak_ended only");
  });

  it("interrupts in the middle: speak_interrupted for the utterance, the buffer cleared, no speak_ended", () => {
    const { clock, event, types } = rig();
    event("agent.speak", { audio: audio(2000) }, "u1");
    event("agent.speak_end", {}, "end");
    clock.advance(800);
    event("agent.interrupt", {}, "stop");
    clock.advance(5000);
    expect(types().slice(4)).toEqual([
      "800 agent.speak_interrupted u1",
      "800 agent.state_updated",
      "800 agent.audio_buffer_cleared stop",
    ]);
  });

  it("measures each utterance as a turn: first chunk to playback, then to the first mouth-open frame", () => {
    const { clock, event, turnMetrics, mode } = rig();
    event("agent.speak", { audio: audio(500) }, "u1");
    event("agent.speak_end", {}, "end1");
    clock.advance(200);
    // The second utterance's first chunk waits 300 ms behind the first.
    event("agent.speak", { audio: audio(300) }, "u2");
    event("agent.speak_end", {}, "end2");
    clock.advance(300);
    const ctx = (mode as unknown as { ctx: SessionContext }).ctx;
    ctx.turnMetrics.videoFrame({ at: clock.now() - 20, mouthOpen: 0.5 }); // before u2 played: not its frame
    clock.advance(40);
    ctx.turnMetrics.videoFrame({ at: clock.now(), mouthOpen: 0.05 }); // mouth at rest
    clock.advance(40);
    ctx.turnMetrics.videoFrame({ at: clock.now(), mouthOpen: 0.4 });
    clock.advance(300);
    expect(turnMetrics.map((e) => [e.at, e.sourceEventId, e.trigger, e.interrupted, e.latency_ms])).toEqual([
      [
        500,
        "u1",
        "agent.speak",
        false,
        { final_transcript: null, first_llm_token: null, first_audio: 0, first_mouth_open_frame: null },
      ],
      [
        800,
        "u2",
        "agent.speak",
        false,
        { final_transcript: null, first_llm_token: null, first_audio: 300, first_mouth_open_frame: 380 },
      ],
    ]);
  });

  it("an interrupted utterance's turn says so", () => {
    const { clock, event, turnMetrics } = rig();
    event("agent.speak", { audio: audio(2000) }, "u1");
    clock.advance(500);
    event("agent.interrupt", {}, "stop");
    expect(turnMetrics).toHaveLength(1);
    expect(turnMetrics[0]).toMatchObject({ sourceEventId: "u1", interrupted: true, at: 500 });
  });

  it("refuses bad audio with an error naming the problem and goes on", () => {
    const { event, sent } = rig();
    event("agent.speak", { audio: "@@@" }, "bad1");
    event("agent.speak", { audio: Buffer.alloc(3).toString("base64") }, "bad2");
    event("agent.speak", {}, "bad3");
    event("agent.speak_end", { audio: "x" }, "bad4");
    const errors = sent.filter((e) => e.type === "error");
    expect(errors.map((e) => [e.sourceEventId, (e.error as { type: string }).type, e.to])).toEqual([
      ["bad1", "invalid_audio", "c1"],
      ["bad2", "invalid_audio", "c1"],
      ["bad3", "invalid_audio", "c1"],
      ["bad4", "invalid_audio", "c1"],
    ]);
    expect(errors[1]).toMatchObject({ error: { message: expect.stringMatching(/3 bytes/) } });
    event("agent.speak", { audio: audio(10) }, "good");
    expect(sent.at(-3)?.type).toBe("agent.audio_buffer_appended");
  });

  it("follows listening: idle -> listening, talking while speaking, back to listening", () => {
    const { clock, event, sent } = rig();
    event("agent.start_listening");
    event("agent.speak_end", { audio: audio(100) }, "u");
    clock.advance(100);
    event("agent.stop_listening");
    expect(sent.filter((e) => e.type === "agent.state_updated").map((e) => e.state)).toEqual([
      "listening",
      "talking",
      "listening",
      "idle",
    ]);
  });

  it("answers vendorA_agent_command with an error in a session without a vendorA agent", () => {
    const { event, sent, mode } = rig();
    expect(mode.accepts.has("user.audio")).toBe(false);
    event("vendorA_agent_command", { vendorA_event_type: "user_message", data: { text: "hi" } }, "cmd");
    expect(sent).toMatchObject([
      { type: "error", sourceEventId: "cmd", error: { type: "no_vendorA_agent" } },
    ]);
  });
});

class FakeConversation implements Conversation {
  readonly events = new AsyncQueue<ConversationEvent>();
  readonly audio: Uint8Array[] = [];
  readonly raw: [string, unknown][] = [];
  interrupted = 0;
  closed = false;
  connectError: unknown;
  readonly provider: ConversationProvider = {
    name: "fake",
    connect: async () => {
      if (this.connectError) throw this.connectError;
      return this;
    },
  };
  sendAudio(pcm: Uint8Array): void {
    this.audio.push(pcm);
  }
  sendRaw(eventType: string, data: unknown): void {
    this.raw.push([eventType, data]);
  }
  interrupt(): void {
    this.interrupted++;
  }
  close(): void {
    this.closed = true;
    this.events.end();
  }
}

const vendorA = {
  lite: { vendorAAgent: { secretId: "00000000-0000-4000-8000-000000000001", agentId: "agent" } },
};
const flush = () => new Promise((r) => setImmediate(r));

describe("LITE mode with a vendorA agent", () => {
  it("plays the agent's audio as utterances, forwards raw events, passes commands and the microphone through", async () => {
    const fake = new FakeConversation();
    const { clock, event, sent, mode, types, transcript } = rig(vendorA, fake);
    expect(mode.accepts.has("user.audio")).toBe(true);
    mode.onConnected("c1", true);
    await flush();
    fake.events.push({ type: "raw", eventType: "agent_response", data: { x: 1 } });
    fake.events.push({ type: "audio", pcm: new Uint8Array(48 * 400) });
    fake.events.push({ type: "agent_transcript", text: "Hello there", final: true });
    fake.events.push({ type: "turn_done" });
    await flush();
    expect(sent[0]).toMatchObject({
      type: "vendorA_agent_event",
      vendorA_event_type: "agent_response",
      data: { x: 1 },
    });
    clock.advance(400);
    expect(types().filter((t) => t.includes("speak_"))).toHaveLength(2);
    expect(transcript).toMatchObject([{ role: "avatar", transcript: "Hello there" }]);

    event("vendorA_agent_command", { vendorA_event_type: "user_message", data: { text: "hi" } }, "cmd");
    event("user.audio", { audio: audio(20) }, "mic");
    expect(fake.raw).toEqual([["user_message", { text: "hi" }]]);
    expect(fake.audio[0]?.length).toBe(20 * 48);
    event("agent.interrupt", {}, "i");
    expect(fake.interrupted).toBe(1);
    await mode.stop();
    expect(fake.closed).toBe(true);
  });

  it("ends an agent utterance after a pause when the agent marks no turn end", async () => {
    const fake = new FakeConversation();
    const { clock, mode, types } = rig(vendorA, fake);
    mode.onConnected("c1", true);
    await flush();
    fake.events.push({ type: "audio", pcm: new Uint8Array(48 * 200) });
    await flush();
    clock.advance(1000);
    expect(types().filter((t) => t.includes("speak_"))).toHaveLength(2);
  });

  it("ends the session with AGENT_HANG_UP when the agent hangs up", async () => {
    const fake = new FakeConversation();
    const { mode, ended } = rig(vendorA, fake);
    mode.onConnected("c1", true);
    await flush();
    fake.events.push({ type: "hang_up" });
    await flush();
    expect(ended).toEqual([SessionEndReason.AGENT_HANG_UP]);
  });

  it("reports a rate-limited agent as a warning and another failure as an error, and goes on", async () => {
    const limited = new FakeConversation();
    limited.connectError = new ProviderError("vendorA", "HTTP 429", "rate_limited");
    const a = rig(vendorA, limited);
    a.mode.onConnected("c1", true);
    await flush();
    expect(a.sent).toMatchObject([{ type: "warning", warning: { type: "provider_rate_limited" } }]);

    const failing = new FakeConversation();
    const b = rig(vendorA, failing);
    b.mode.onConnected("c1", true);
    await flush();
    failing.events.push({ type: "error", error: new ProviderError("vendorA", "boom") });
    await flush();
    expect(b.sent).toMatchObject([{ type: "error", error: { type: "provider_error" } }]);
    b.event("agent.speak", { audio: audio(10) }, "still");
    expect(b.sent.at(-3)?.type).toBe("agent.audio_buffer_appended");
  });
});
