import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VendorDAgent, type VendorDAgentOptions } from "../src/agents/vendor-d-agent.js";
import { PcmResampler } from "../src/audio/stream-resampler.js";
import {
  type Conversation,
  type ConversationEvent,
  type ConversationOptions,
  ProviderError,
} from "../src/types.js";
import { EventReader, shapes } from "./servers/event-reader.js";
import { concat, tone } from "./servers/realtime-audio-fixtures.js";
import type { WsTestServer } from "./servers/realtime-peer-transport.js";
import {
  startVendorDAgentServer,
  VENDOR_D_AGENT_ID,
  type VendorDAgentBehaviour,
  type VendorDAgentPeer,
} from "./servers/vendor-d-agent-server.js";

const KEY = "vendor-d-agent-key";
const VERSION_HEADER = "x-test-version";
let server: WsTestServer<VendorDAgentPeer>;
let behaviour: VendorDAgentBehaviour;
let open: Conversation[];

beforeEach(async () => {
  behaviour = { silent: false };
  server = await startVendorDAgentServer(KEY, VERSION_HEADER, behaviour);
  open = [];
});
afterEach(async () => {
  for (const conversation of open) conversation.close();
  await server.close();
});

function agent(options: Partial<VendorDAgentOptions> = {}): VendorDAgent {
  return new VendorDAgent({ baseUrl: new URL(server.url).origin, versionHeader: VERSION_HEADER, ...options });
}

async function connect(
  options: Partial<ConversationOptions> = {},
  agentOptions: Partial<VendorDAgentOptions> = {},
) {
  const peerReady = server.nextPeer();
  const conversation = await agent(agentOptions).connect({
    apiKey: KEY,
    agentId: VENDOR_D_AGENT_ID,
    ...options,
  });
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

const audioOf = (events: ConversationEvent[]) =>
  concat(events.flatMap((e) => (e.type === "audio" ? [e.pcm] : [])));

describe("VendorDAgent", () => {
  it("connects with the key and version headers and opens with session_create", async () => {
    const { peer } = await connect({}, { apiVersion: "2026-09-01" });
    const handshake = server.handshakes[0];
    expect(handshake?.url).toBe(`/v1/agents/websocket/${VENDOR_D_AGENT_ID}`);
    expect(handshake?.headers["x-api-key"]).toBe(KEY);
    expect(handshake?.headers[VERSION_HEADER]).toBe("2026-09-01");
    expect(peer.messages).toEqual([
      { type: "session_create", audio: { input_format: "pcm_24000", output_delivery: "speaking_pace" } },
    ]);
    await connect();
    expect(server.handshakes[1]?.headers[VERSION_HEADER]).toBe("2026-08-14");
  });

  it("is handed out only after session_ready", async () => {
    behaviour.silent = true;
    const error = await rejection(
      agent({ connectTimeoutMs: 300 }).connect({ apiKey: KEY, agentId: VENDOR_D_AGENT_ID }),
    );
    expect(error.message).toContain("not configured in time");
  });

  it("sends the session's 24 kHz audio unchanged, in whole samples", async () => {
    const { conversation, peer } = await connect();
    const audio = tone(24_000, 100, 440);
    conversation.sendAudio(audio.subarray(0, 1001));
    conversation.sendAudio(audio.subarray(1001));
    await peer.received.waitFor(() => peer.received.items.length === 3);
    expect(peer.userAudio.map((chunk) => chunk.length)).toEqual([1000, audio.length - 1000]);
    expect(concat(peer.userAudio)).toEqual(audio);
    expect(peer.violations).toEqual([]);
  });

  it("plays the agent's audio unchanged at 24 kHz, and resamples a format session_ready names", async () => {
    const { peer, reader } = await connect();
    const speech = tone(24_000, 200, 300);
    peer.sendAudio(speech);
    peer.send({ type: "turn_ended", turn: 1, role: "assistant", text: "Hi.", interrupted: false });
    expect(audioOf(await reader.until("turn_done"))).toEqual(speech);

    behaviour.readyFormat = "pcm_16000";
    const narrow = await connect();
    const wire = tone(16_000, 200, 300);
    narrow.peer.sendAudio(wire);
    narrow.peer.send({ type: "turn_ended", turn: 1, role: "assistant", text: "Hi.", interrupted: false });
    expect(audioOf(await narrow.reader.until("turn_done"))).toEqual(
      new PcmResampler(16_000, 24_000).process(wire),
    );
  });

  it("maps turns to transcripts: deltas are partial, ended turns final", async () => {
    const { peer, reader } = await connect();
    peer.send({ type: "turn_started", turn: 3, role: "user", start_time: 12.48 });
    peer.send({
      type: "turn_ended",
      turn: 3,
      role: "user",
      text: "Check my order.",
      interrupted: false,
      tool_calls: [],
    });
    peer.send({ type: "turn_started", turn: 4, role: "assistant", start_time: 15.1 });
    peer.send({ type: "turn_output_text_delta", turn: 4, role: "assistant", text: "Sure," });
    peer.send({ type: "turn_output_text_delta", turn: 4, role: "assistant", text: " one moment." });
    peer.send({ type: "dtmf_output", digit: "5" });
    peer.send({
      type: "turn_ended",
      turn: 4,
      role: "assistant",
      text: "Sure, one moment.",
      interrupted: false,
    });
    expect(await reader.until("turn_done")).toEqual([
      { type: "user_transcript", text: "Check my order.", final: true },
      { type: "agent_transcript", text: "Sure,", final: false },
      { type: "agent_transcript", text: " one moment.", final: false },
      { type: "agent_transcript", text: "Sure, one moment.", final: true },
      { type: "turn_done" },
    ]);
  });

  it("audio_output_clear is an interruption", async () => {
    const { peer, reader } = await connect();
    peer.sendAudio(tone(24_000, 50));
    peer.send({ type: "audio_output_clear" });
    expect((await reader.until("interrupted")).map((e) => e.type)).toEqual(["audio", "interrupted"]);
  });

  it("interrupt() drops the agent's audio and text until its next turn", async () => {
    const { conversation, peer, reader } = await connect();
    peer.sendAudio(tone(24_000, 50));
    await reader.until("audio");
    conversation.interrupt();
    peer.sendAudio(tone(24_000, 50));
    peer.send({ type: "turn_output_text_delta", turn: 1, role: "assistant", text: "dropped" });
    peer.send({ type: "turn_started", turn: 2, role: "assistant" });
    peer.sendAudio(tone(24_000, 50));
    peer.send({ type: "turn_ended", turn: 2, role: "assistant", text: "Next.", interrupted: false });
    expect((await reader.until("turn_done")).map((e) => e.type)).toEqual([
      "audio",
      "agent_transcript",
      "turn_done",
    ]);
  });

  it("answers a client tool call that waits for a result with an error result", async () => {
    const { peer } = await connect();
    peer.send({
      type: "client_tool_call",
      tool_call_id: "call_2b",
      tool_name: "open_cart",
      parameters: {},
      expects_response: false,
    });
    peer.send({
      type: "client_tool_call",
      tool_call_id: "call_3c",
      tool_name: "open_cart",
      parameters: {},
      expects_response: true,
    });
    await peer.received.waitFor((f) => f.kind === "json" && f.message.type === "client_tool_result");
    expect(peer.messages.slice(1)).toEqual([
      {
        type: "client_tool_result",
        tool_call_id: "call_3c",
        result: "client tools are not available in this session",
        is_error: true,
      },
    ]);
  });

  it("the agent ending the call (a normal close) ends the events without an error", async () => {
    const { peer, reader } = await connect();
    peer.send({ type: "turn_ended", turn: 9, role: "assistant", text: "Bye!", interrupted: false });
    peer.closeWith(1000);
    expect(await reader.rest()).toEqual([
      { type: "agent_transcript", text: "Bye!", final: true },
      { type: "turn_done" },
    ]);
  });

  describe("failures", () => {
    it("a bad key is unauthorized, a missing agent a bad request, HTTP 429 rate_limited", async () => {
      const bad = await rejection(agent().connect({ apiKey: "nope", agentId: VENDOR_D_AGENT_ID }));
      expect(bad.kind).toBe("unauthorized");
      expect(bad.message).toContain("Invalid API key");
      expect((await rejection(agent().connect({ apiKey: KEY, agentId: "agent_missing" }))).kind).toBe(
        "bad_request",
      );
      server.refuseNext({ status: 429, body: { error: "Too many concurrent calls" } });
      expect((await rejection(agent().connect({ apiKey: KEY, agentId: VENDOR_D_AGENT_ID }))).kind).toBe(
        "rate_limited",
      );
      await expect(agent().connect({ apiKey: KEY })).rejects.toMatchObject({ kind: "bad_request" });
    });

    it("a fatal error instead of session_ready rejects the connection, classified by its words", async () => {
      behaviour.startError = { code: "concurrency_limit_exceeded", message: "Too many concurrent calls" };
      const error = await rejection(agent().connect({ apiKey: KEY, agentId: VENDOR_D_AGENT_ID }));
      expect(error.kind).toBe("rate_limited");
      expect(error.message).toBe("concurrency_limit_exceeded: Too many concurrent calls");
    });

    it("a non-fatal error is reported and the conversation goes on; a fatal one ends it", async () => {
      const { peer, reader } = await connect();
      peer.error("invalid_event", "dtmf_input must be one of 0-9, * or #", false);
      peer.send({ type: "turn_ended", turn: 1, role: "user", text: "still on", interrupted: false });
      expect(shapes(await reader.until("user_transcript"))).toEqual([
        { type: "error", kind: "bad_request" },
        { type: "user_transcript", text: "still on", final: true },
      ]);
      peer.error("internal_error", "the agent crashed", true);
      expect(shapes(await reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("a close with a reason is classified; an abrupt drop is unavailable", async () => {
      const first = await connect();
      first.peer.closeWith(1008, "quota exceeded");
      expect(shapes(await first.reader.rest())).toEqual([{ type: "error", kind: "rate_limited" }]);
      const second = await connect();
      second.peer.drop();
      expect(shapes(await second.reader.rest())).toEqual([{ type: "error", kind: "unavailable" }]);
    });

    it("malformed messages are reported and the conversation goes on", async () => {
      const { peer, reader } = await connect();
      peer.sendRaw("nope");
      peer.send({ type: "audio_output", audio: "%%%" });
      peer.send({ type: "turn_ended", turn: 1, role: "user", text: "ok", interrupted: false });
      expect(shapes(await reader.until("user_transcript"))).toEqual([
        { type: "error", kind: "unavailable" },
        { type: "error", kind: "unavailable" },
        { type: "user_transcript", text: "ok", final: true },
      ]);
    });
  });
});
