import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VendorAAgent } from "../src/agents/vendor-a-agent.js";
import { decodeMulaw, encodeMulaw } from "../src/agents/wire-audio.js";
import { PcmResampler } from "../src/audio/stream-resampler.js";
import {
  type Conversation,
  type ConversationEvent,
  type ConversationOptions,
  ProviderError,
} from "../src/types.js";
import { zeroCrossingRate } from "./servers/audio-checks.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { chunks, concat, tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import {
  defaultAgentBehaviour,
  startVendorAAgentServer,
  type VendorAAgentBehaviour,
  type VendorAAgentPeer,
} from "./servers/vendor-a-agent-server.js";

const KEY = "xi-agent-key";
let server: WsTestServer<VendorAAgentPeer>;
let behaviour: VendorAAgentBehaviour;
let open: Conversation[];

beforeEach(async () => {
  behaviour = defaultAgentBehaviour();
  server = await startVendorAAgentServer(KEY, behaviour);
  open = [];
});
afterEach(async () => {
  for (const conversation of open) conversation.close();
  await server.close();
});

function agent(connectTimeoutMs?: number): VendorAAgent {
  return new VendorAAgent({ baseUrl: new URL(server.url).origin, connectTimeoutMs });
}

async function connect(options: Partial<ConversationOptions> = {}) {
  const peerReady = server.nextPeer();
  const conversation = await agent().connect({ apiKey: KEY, agentId: "agent-1", ...options });
  open.push(conversation);
  return {
    conversation,
    peer: await peerReady,
    reader: new EventReader<ConversationEvent>(conversation.events),
  };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const withoutRaw = (events: ConversationEvent[]) => events.filter((e) => e.type !== "raw");
const audioOf = (events: ConversationEvent[]) =>
  concat(events.flatMap((e) => (e.type === "audio" ? [e.pcm] : [])));

describe("VendorAAgent", () => {
  it("connects with the key header and the agent id, and opens with the initiation data", async () => {
    const { peer } = await connect({
      voice: "voice-77",
      dynamicVariables: { name: "Ada", visits: 3, vip: true },
    });
    expect(server.handshakes[0]?.headers["xi-api-key"]).toBe(KEY);
    expect(server.handshakes[0]?.url).toBe("/v1/convai/conversation?agent_id=agent-1");
    expect(peer.messages[0]).toEqual({
      type: "conversation_initiation_client_data",
      conversation_config_override: { tts: { voice_id: "voice-77" } },
      dynamic_variables: { name: "Ada", visits: 3, vip: true },
    });
    const plain = await connect();
    expect(plain.peer.messages[0]).toEqual({ type: "conversation_initiation_client_data" });
  });

  it("is handed out only once the server sent its metadata, which is forwarded raw first", async () => {
    const { reader } = await connect();
    const [first] = await reader.until("raw");
    expect(first).toEqual({
      type: "raw",
      eventType: "conversation_initiation_metadata",
      data: {
        type: "conversation_initiation_metadata",
        conversation_initiation_metadata_event: {
          conversation_id: "conv-1",
          agent_output_audio_format: "pcm_16000",
          user_input_audio_format: "pcm_16000",
        },
      },
    });
    behaviour.silent = true;
    const error = await rejection(agent(300).connect({ apiKey: KEY, agentId: "agent-1" }));
    expect(error.message).toContain("not configured in time");
  });

  it("sends the user's audio resampled to the announced input format", async () => {
    const { conversation, peer } = await connect();
    const pieces = chunks(tone(24_000, 400, 1000), 24_000, 20);
    for (const piece of pieces) conversation.sendAudio(piece);
    // The initiation, then one chunk per write.
    await peer.received.waitFor(() => peer.received.items.length === pieces.length + 1);
    const reference = new PcmResampler(24_000, 16_000);
    expect(peer.userAudio).toEqual(pieces.map((piece) => reference.process(piece)));
    expect(Math.abs(zeroCrossingRate(concat(peer.userAudio), 16_000) - 2000)).toBeLessThan(40);
    expect(peer.violations).toEqual([]);

    behaviour.inputFormat = "ulaw_8000";
    const phone = await connect();
    const audio = tone(24_000, 100, 400);
    phone.conversation.sendAudio(audio);
    await phone.peer.received.waitFor(() => phone.peer.received.items.length === 2);
    expect(phone.peer.userAudio[0]).toEqual(encodeMulaw(new PcmResampler(24_000, 8000).process(audio)));
  });

  it("plays the agent's audio at 24 kHz: resampled from 16 kHz, untouched at 24 kHz, decoded from mu-law", async () => {
    const { peer, reader } = await connect();
    const agentAudio = chunks(tone(16_000, 300, 500), 16_000, 100);
    for (const piece of agentAudio) peer.sendAudio(piece, 1);
    peer.sendAgentResponse("Hello there.");
    const events = await reader.until("agent_transcript");
    const reference = new PcmResampler(16_000, 24_000);
    expect(audioOf(events)).toEqual(concat(agentAudio.map((piece) => reference.process(piece))));
    expect(Math.abs(zeroCrossingRate(audioOf(events), 24_000) - 1000)).toBeLessThan(20);

    behaviour.outputFormat = "pcm_24000";
    const wide = await connect();
    const exact = tone(24_000, 200, 300);
    wide.peer.sendAudio(exact, 1);
    wide.peer.sendAgentResponse("x");
    expect(audioOf(await wide.reader.until("agent_transcript"))).toEqual(exact);

    behaviour.outputFormat = "ulaw_8000";
    const phone = await connect();
    const coded = encodeMulaw(tone(8000, 200, 300));
    phone.peer.sendAudio(coded, 1);
    phone.peer.sendAgentResponse("x");
    const decoded = audioOf(await phone.reader.until("agent_transcript"));
    expect(decoded).toEqual(new PcmResampler(8000, 24_000).process(decodeMulaw(coded)));
  });

  it("forwards every server event raw, in order, next to what it means", async () => {
    const { peer, reader } = await connect();
    await reader.until("raw");
    peer.sendUserTranscript("What's the weather?");
    peer.send({ type: "vad_score", vad_score_event: { vad_score: 0.93 } });
    peer.send({
      type: "client_tool_call",
      client_tool_call: { tool_name: "get_weather", tool_call_id: "call-1", parameters: { city: "Oslo" } },
    });
    peer.sendAgentResponse("Sunny.");
    peer.send({ type: "agent_response_complete" });
    const events = await reader.until("turn_done");
    expect(events).toEqual([
      {
        type: "raw",
        eventType: "user_transcript",
        data: {
          type: "user_transcript",
          user_transcription_event: { user_transcript: "What's the weather?" },
        },
      },
      { type: "user_transcript", text: "What's the weather?", final: true },
      {
        type: "raw",
        eventType: "vad_score",
        data: { type: "vad_score", vad_score_event: { vad_score: 0.93 } },
      },
      {
        type: "raw",
        eventType: "client_tool_call",
        data: {
          type: "client_tool_call",
          client_tool_call: {
            tool_name: "get_weather",
            tool_call_id: "call-1",
            parameters: { city: "Oslo" },
          },
        },
      },
      {
        type: "raw",
        eventType: "agent_response",
        data: { type: "agent_response", agent_response_event: { agent_response: "Sunny." } },
      },
      { type: "agent_transcript", text: "Sunny.", final: true },
      { type: "raw", eventType: "agent_response_complete", data: { type: "agent_response_complete" } },
      { type: "turn_done" },
    ]);
  });

  it("answers every ping with a pong carrying its event id", async () => {
    const { peer, reader } = await connect();
    peer.ping(5);
    peer.ping(6);
    await peer.received.waitFor((f) => f.kind === "json" && f.message.event_id === 6);
    expect(peer.messages.slice(1)).toEqual([
      { type: "pong", event_id: 5 },
      { type: "pong", event_id: 6 },
    ]);
    expect(peer.violations).toEqual([]);
    expect(withoutRaw(await reader.until("raw", (e) => e.type === "raw" && e.eventType === "ping"))).toEqual(
      [],
    );
  });

  it("passes raw client events and text through", async () => {
    const { conversation, peer } = await connect();
    conversation.sendRaw?.("client_tool_result", {
      tool_call_id: "call-1",
      result: "12 degrees",
      is_error: false,
    });
    conversation.sendRaw?.("contextual_update", {
      text: "The user opened the pricing page",
      type: "ignored",
    });
    conversation.sendText?.("Hi!");
    await peer.received.waitFor((f) => f.kind === "json" && f.message.type === "user_message");
    expect(peer.messages.slice(1)).toEqual([
      { type: "client_tool_result", tool_call_id: "call-1", result: "12 degrees", is_error: false },
      { type: "contextual_update", text: "The user opened the pricing page" },
      { type: "user_message", text: "Hi!" },
    ]);
    expect(peer.violations).toEqual([]);
  });

  it("an interruption drops the interrupted response's audio; the next response plays", async () => {
    const { peer, reader } = await connect();
    const a = tone(16_000, 100, 300);
    peer.sendAudio(a, 3);
    peer.sendInterruption(3);
    peer.sendAudio(a, 3); // stale: sent before the server stopped the response
    peer.sendAudio(tone(16_000, 100, 600), 4);
    peer.sendAgentResponse("Go on.");
    const events = withoutRaw(await reader.until("agent_transcript"));
    expect(events.map((e) => e.type)).toEqual(["audio", "interrupted", "audio", "agent_transcript"]);
  });

  it("interrupt() drops the rest of the response being played", async () => {
    const { conversation, peer, reader } = await connect();
    peer.sendAudio(tone(16_000, 100), 7);
    await reader.until("audio");
    conversation.interrupt();
    peer.sendAudio(tone(16_000, 100), 7);
    peer.sendAudio(tone(16_000, 100), 8);
    peer.sendAgentResponse("Next.");
    expect(withoutRaw(await reader.until("agent_transcript")).map((e) => e.type)).toEqual([
      "audio",
      "agent_transcript",
    ]);
  });

  describe("hanging up", () => {
    it("the agent's end_call is one hang_up, and its normal close ends the events", async () => {
      const { peer, reader } = await connect();
      await reader.until("raw");
      peer.sendAgentResponse("Goodbye!");
      peer.endCall();
      expect(withoutRaw(await reader.rest())).toEqual([
        { type: "agent_transcript", text: "Goodbye!", final: true },
        { type: "hang_up" },
      ]);
    });

    it("a normal close by the server is a hang-up too", async () => {
      const { peer, reader } = await connect();
      peer.closeWith(1000);
      expect(withoutRaw(await reader.rest())).toEqual([{ type: "hang_up" }]);
    });

    it("closing from the client is not a hang-up", async () => {
      const { conversation, peer, reader } = await connect();
      conversation.close();
      expect(withoutRaw(await reader.rest())).toEqual([]);
      expect((await peer.closed).code).toBe(1000);
    });

    it("aborting while connecting rejects; aborting later closes without a hang-up", async () => {
      behaviour.silent = true;
      const early = new AbortController();
      const connecting = agent().connect({ apiKey: KEY, agentId: "agent-1" }, early.signal);
      const silentPeer = await server.nextPeer();
      await silentPeer.received.waitFor(() => true);
      early.abort(new Error("session stopped"));
      await expect(connecting).rejects.toThrow("session stopped");

      behaviour.silent = false;
      const late = new AbortController();
      const peerReady = server.nextPeer();
      const conversation = await agent().connect({ apiKey: KEY, agentId: "agent-1" }, late.signal);
      const peer = await peerReady;
      late.abort();
      expect(withoutRaw(await new EventReader(conversation.events).rest())).toEqual([]);
      expect((await peer.closed).code).toBe(1000);
    });

    it("a failed end_call tool is not a hang-up", async () => {
      const { peer, reader } = await connect();
      peer.send({
        type: "agent_tool_response",
        agent_tool_response: { tool_name: "end_call", is_error: true },
      });
      peer.sendAgentResponse("Still here.");
      expect(withoutRaw(await reader.until("agent_transcript"))).toEqual([
        { type: "agent_transcript", text: "Still here.", final: true },
      ]);
    });
  });

  describe("failures", () => {
    it("no agent id is a bad request before any connection", async () => {
      expect(await rejection(agent().connect({ apiKey: KEY }))).toMatchObject({ kind: "bad_request" });
      expect(server.handshakes).toHaveLength(0);
    });

    it("a bad key is unauthorized; HTTP 429 is rate_limited", async () => {
      const bad = await rejection(agent().connect({ apiKey: "nope", agentId: "agent-1" }));
      expect(bad.kind).toBe("unauthorized");
      expect(bad.message).toContain("Invalid API key");
      server.refuseNext({
        status: 429,
        headers: { "retry-after": "2" },
        body: { detail: "Too many concurrent requests" },
      });
      const limited = await rejection(agent().connect({ apiKey: KEY, agentId: "agent-1" }));
      expect(limited.kind).toBe("rate_limited");
      expect(limited.message).toContain("retry after 2 s");
    });

    it("a voice override the agent does not allow rejects the connection as a bad request", async () => {
      behaviour.allowVoiceOverride = false;
      const error = await rejection(agent().connect({ apiKey: KEY, agentId: "agent-1", voice: "v" }));
      expect(error.kind).toBe("bad_request");
      expect(error.message).toContain("not allowed");
    });

    it("an audio format the client cannot play rejects the connection", async () => {
      behaviour.outputFormat = "mp3_44100_128";
      const error = await rejection(agent().connect({ apiKey: KEY, agentId: "agent-1" }));
      expect(error.kind).toBe("bad_request");
      expect(error.message).toContain("mp3_44100_128");
    });

    it("a quota close mid-conversation is rate_limited and not a hang-up", async () => {
      const { peer, reader } = await connect();
      peer.closeWith(1008, "This request exceeds your quota of 10000");
      expect(shapes(withoutRaw(await reader.rest()))).toEqual([{ type: "error", kind: "rate_limited" }]);
    });

    it("a server error close is unavailable; an abrupt drop too", async () => {
      const first = await connect();
      first.peer.closeWith(1011, "internal error");
      expect(shapes(withoutRaw(await first.reader.rest()))).toEqual([{ type: "error", kind: "unavailable" }]);
      const second = await connect();
      second.peer.drop();
      const events = withoutRaw(await second.reader.rest());
      expect(shapes(events)).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("malformed messages are reported and the conversation goes on", async () => {
      const { peer, reader } = await connect();
      peer.sendRaw("{oops");
      peer.send({ no_type: true });
      peer.send({ type: "audio", audio_event: { audio_base_64: "not base64!", event_id: 1 } });
      peer.sendAgentResponse("fine");
      expect(shapes(withoutRaw(await reader.until("agent_transcript")))).toEqual([
        { type: "error", kind: "unavailable" },
        { type: "error", kind: "unavailable" },
        { type: "error", kind: "unavailable" },
        { type: "agent_transcript", text: "fine", final: true },
      ]);
    });
  });
});
