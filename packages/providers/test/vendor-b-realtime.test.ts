import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VendorBRealtime } from "../src/realtime/vendor-b-realtime.js";
import {
  type Conversation,
  type ConversationEvent,
  type ConversationOptions,
  ProviderError,
} from "../src/types.js";
import { ConversationReader } from "./servers/conversation-reader.js";
import { chunks, concat, silence, tone } from "./servers/realtime-audio-fixtures.js";
import { type VendorBPeer, VendorBRealtimeServer } from "./servers/vendor-b-realtime-server.js";

const KEY = "sk-realtime-test";
const RATE = 24_000;
let server: VendorBRealtimeServer;
let clock: number;
let open: Conversation[];

beforeEach(async () => {
  server = await VendorBRealtimeServer.start(KEY);
  clock = 1_000;
  open = [];
});
afterEach(async () => {
  for (const conversation of open) conversation.close();
  await server.transport.close();
});

function provider(connectTimeoutMs?: number): VendorBRealtime {
  return new VendorBRealtime({ baseUrl: server.url, now: () => clock, connectTimeoutMs });
}

async function connect(
  options: Partial<ConversationOptions> = {},
): Promise<{ conversation: Conversation; peer: VendorBPeer; reader: ConversationReader }> {
  const peerReady = server.transport.nextPeer();
  const conversation = await provider().connect({ apiKey: KEY, ...options });
  open.push(conversation);
  return { conversation, peer: await peerReady, reader: new ConversationReader(conversation) };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const audioOf = (events: ConversationEvent[]) => events.flatMap((e) => (e.type === "audio" ? [e.pcm] : []));
const withoutAudio = (events: ConversationEvent[]) => events.filter((e) => e.type !== "audio");

describe("VendorBRealtime", () => {
  it("connects with the key and model, and configures the session before handing it out", async () => {
    const { peer } = await connect({
      model: "gpt-realtime-mini",
      instructions: "You are Ava.",
      temperature: 0.9,
      language: "en-US",
    });
    const handshake = server.transport.handshakes[0];
    expect(handshake?.url).toBe("/v1/realtime?model=gpt-realtime-mini");
    expect(handshake?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(peer.received.items).toEqual([
      {
        type: "session.update",
        session: {
          type: "realtime",
          output_modalities: ["audio"],
          instructions: "You are Ava.",
          temperature: 0.9,
          audio: {
            input: {
              format: { type: "audio/pcm", rate: 24_000 },
              transcription: { model: "gpt-4o-mini-transcribe", language: "en" },
              turn_detection: { type: "server_vad", create_response: true, interrupt_response: true },
            },
            output: { format: { type: "audio/pcm", rate: 24_000 }, voice: "alloy" },
          },
        },
      },
    ]);
    expect(peer.violations).toEqual([]);
  });

  it("configures the full-duplex family without a temperature and with its own default voice", async () => {
    const { peer } = await connect({ model: "gpt-live-1", temperature: 0.9 });
    const session = peer.received.items[0]?.session as Record<string, unknown>;
    expect(session).not.toHaveProperty("temperature");
    expect((session.audio as { output: { voice: string } }).output.voice).toBe("marin");
    expect(peer.violations).toEqual([]);
  });

  it("streams the user's audio, and maps a detected turn to transcripts, the answer's audio and turn_done", async () => {
    const { conversation, peer, reader } = await connect();
    const answer = [tone(RATE, 100, 440), tone(RATE, 100, 550)];
    peer.responses.push({ audio: answer, transcript: ["Sunny ", "today."] });
    const spoken = concat([tone(RATE, 300), silence(RATE, 600)]);
    for (const chunk of chunks(spoken, RATE, 100)) conversation.sendAudio(chunk);

    const events = await reader.until("turn_done");
    expect(withoutAudio(events)).toEqual([
      { type: "user_transcript", text: "what ", final: false },
      { type: "user_transcript", text: "is ", final: false },
      { type: "user_transcript", text: "the ", final: false },
      { type: "user_transcript", text: "weather", final: false },
      { type: "user_transcript", text: "what is the weather", final: true },
      { type: "agent_transcript", text: "Sunny ", final: false },
      { type: "agent_transcript", text: "today.", final: false },
      { type: "agent_transcript", text: "Sunny today.", final: true },
      { type: "turn_done" },
    ]);
    expect(audioOf(events)).toEqual(answer);
    // Audio goes out as it arrives: each chunk after its transcript piece, both before the final text.
    expect(events.map((e) => e.type).slice(5, 9)).toEqual([
      "agent_transcript",
      "audio",
      "agent_transcript",
      "audio",
    ]);
    expect(concat(peer.appended)).toEqual(spoken);
    expect(peer.received.items.filter((e) => e.type === "input_audio_buffer.append")).toHaveLength(9);
    expect(peer.violations).toEqual([]);
  });

  it("answers text with a user message item and a response request", async () => {
    const { conversation, peer, reader } = await connect();
    conversation.sendText?.("Say hello");
    const events = await reader.until("turn_done");
    expect(peer.received.items.slice(1)).toEqual([
      {
        type: "conversation.item.create",
        item: { type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] },
      },
      { type: "response.create" },
    ]);
    expect(events.map((e) => e.type)).toEqual(["agent_transcript", "audio", "agent_transcript", "turn_done"]);
  });

  it("understands the older event names for audio and its transcript", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({ audio: [tone(RATE, 50)], transcript: ["Hi"], legacyNames: true });
    conversation.sendText?.("hello");
    const events = await reader.until("turn_done");
    expect(events.map((e) => e.type)).toEqual(["agent_transcript", "audio", "agent_transcript", "turn_done"]);
  });

  it("interrupts: cancels the response, truncates the item where playback stands and drops late audio", async () => {
    const { conversation, peer, reader } = await connect();
    const answer = [tone(RATE, 100), tone(RATE, 100), tone(RATE, 100)];
    peer.responses.push({
      audio: answer,
      transcript: ["Once ", "upon ", "a time."],
      holdAfter: 2,
      lateChunkOnCancel: true,
    });
    conversation.sendText?.("Tell me a story");
    await reader.until("audio");
    await reader.until("audio");
    clock += 150; // 150 ms of the 200 ms received have played

    conversation.interrupt();
    const after = await reader.until("turn_done");
    expect(after).toEqual([{ type: "turn_done" }]); // the chunk in flight and the final transcript are dropped
    const sent = peer.received.items.slice(-2);
    expect(sent[0]).toEqual({ type: "response.cancel" });
    expect(sent[1]).toMatchObject({
      type: "conversation.item.truncate",
      content_index: 0,
      audio_end_ms: 150,
    });
    expect(peer.violations).toEqual([]);

    // The next answer is heard again.
    conversation.sendText?.("Go on");
    expect(audioOf(await reader.until("turn_done"))).toHaveLength(1);
  });

  it("reports a barge-in when the user speaks over the answer, and lets the server cancel it", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({
      audio: [tone(RATE, 100), tone(RATE, 100)],
      transcript: ["Well, ", "actually"],
      holdAfter: 1,
    });
    conversation.sendText?.("Explain");
    await reader.until("audio");
    clock += 40;

    conversation.sendAudio(tone(RATE, 100));
    expect(await reader.until("turn_done")).toEqual([{ type: "interrupted" }, { type: "turn_done" }]);
    const truncate = await peer.received.waitFor((e) => e.type === "conversation.item.truncate");
    expect(truncate.audio_end_ms).toBe(40);
    expect(peer.received.items.some((e) => e.type === "response.cancel")).toBe(false);

    // The user's turn then goes on as usual.
    for (const chunk of chunks(silence(RATE, 500), RATE, 100)) conversation.sendAudio(chunk);
    const turn = await reader.until("turn_done");
    expect(turn).toContainEqual({ type: "user_transcript", text: "what is the weather", final: true });
    expect(peer.violations).toEqual([]);
  });

  it("does not report an interruption when the user speaks while the agent is silent", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({ audio: [tone(RATE, 100)], transcript: ["Yes."] });
    conversation.sendText?.("Are you there?");
    await reader.until("turn_done");
    clock += 100; // the answer has played out
    for (const chunk of chunks(concat([tone(RATE, 200), silence(RATE, 500)]), RATE, 100))
      conversation.sendAudio(chunk);
    const events = await reader.until("turn_done");
    expect(events.some((e) => e.type === "interrupted")).toBe(false);
    expect(peer.received.items.some((e) => e.type === "conversation.item.truncate")).toBe(false);
  });

  it("swallows the cancel that crosses a finished response on the wire", async () => {
    const { conversation, peer, reader } = await connect();
    // The client believes a response is running that the server has already finished.
    peer.send({ type: "response.created", response: { id: "resp_gone", status: "in_progress" } });
    peer.send({
      type: "conversation.item.input_audio_transcription.delta",
      item_id: "item_x",
      content_index: 0,
      delta: "sync",
    });
    await reader.until("user_transcript"); // the client has handled response.created by now

    conversation.interrupt();
    await peer.received.waitFor((e) => e.type === "response.cancel");
    expect(peer.violations).toEqual([expect.stringContaining("response_cancel_not_active")]);
    conversation.sendText?.("next");
    const events = await reader.until("turn_done");
    expect(events.some((e) => e.type === "error")).toBe(false);
  });

  it("maps a wrong key refused at the handshake to unauthorized", async () => {
    const error = await rejection(provider().connect({ apiKey: "sk-wrong" }));
    expect(error.kind).toBe("unauthorized");
    expect(error.message).toContain("Incorrect API key provided.");
  });

  it("maps HTTP 429 at the handshake to rate_limited with the wait", async () => {
    server.transport.refuseNext({
      status: 429,
      headers: { "retry-after": "3" },
      body: { error: { message: "Too many sessions", type: "requests", code: "rate_limit_exceeded" } },
    });
    const error = await rejection(provider().connect({ apiKey: KEY }));
    expect(error.kind).toBe("rate_limited");
    expect(error.message).toContain("Too many sessions");
    expect(error.message).toContain("retry after 3 s");
  });

  it("fails to connect when the server refuses the model or the configuration", async () => {
    const model = await rejection(provider().connect({ apiKey: KEY, model: "gpt-unknown" }));
    expect(model.kind).toBe("bad_request");
    expect(model.message).toContain("does not exist");

    const voice = await rejection(provider().connect({ apiKey: KEY, model: "gpt-live-1", voice: "alloy" }));
    expect(voice.kind).toBe("bad_request");
    expect(voice.message).toContain("Invalid value: 'alloy'");
  });

  it("maps errors during the session to error events and keeps going", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({
      audio: [],
      transcript: [],
      fail: { type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached" },
    });
    conversation.sendText?.("hi");
    const failed = await reader.until("turn_done");
    expect(failed).toHaveLength(2);
    expect(failed[0]?.type === "error" && failed[0].error.kind).toBe("rate_limited");

    peer.send({
      type: "error",
      error: { type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your quota" },
    });
    const [quota] = await reader.until("error");
    expect(quota?.type === "error" && quota.error.kind).toBe("rate_limited");

    conversation.sendAudio(new Uint8Array(3)); // not whole 16-bit samples: the server refuses it
    const [refused] = await reader.until("error");
    expect(refused?.type === "error" && refused.error.kind).toBe("bad_request");

    peer.sendText("{not json");
    const [malformed] = await reader.until("error");
    expect(malformed?.type === "error" && malformed.error.message).toContain("malformed server message");

    conversation.sendText?.("still there?");
    expect((await reader.until("turn_done")).map((e) => e.type)).toContain("audio");
  });

  it("reports a dropped connection and ends the events", async () => {
    const { peer, reader } = await connect();
    peer.drop();
    const events = await reader.rest();
    expect(events).toHaveLength(1);
    expect(events[0]?.type === "error" && events[0].error.kind).toBe("unavailable");
  });

  it("closes cleanly: the server sees 1000 and the events end without an error", async () => {
    const { conversation, peer, reader } = await connect();
    conversation.close();
    expect(await peer.closed).toEqual({ code: 1000 });
    expect(await reader.rest()).toEqual([]);
    conversation.sendAudio(tone(RATE, 10)); // ignored after close
  });

  it("gives up when the session is not configured in time, or when aborted while connecting", async () => {
    const slow = server.transport.nextPeer().then((peer) => {
      peer.holdSetup = true;
      return peer;
    });
    const timedOut = await rejection(provider(150).connect({ apiKey: KEY }));
    expect(timedOut.message).toContain("not configured in time");
    await (await slow).closed;

    const held = server.transport.nextPeer().then((peer) => {
      peer.holdSetup = true;
      return peer;
    });
    const controller = new AbortController();
    const connecting = provider().connect({ apiKey: KEY }, controller.signal);
    const peer = await held;
    await peer.received.waitFor((e) => e.type === "session.update");
    const reason = new Error("session stopped");
    controller.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    await peer.closed;
  });

  it("closes the conversation when the connect signal is aborted later", async () => {
    const controller = new AbortController();
    const peerReady = server.transport.nextPeer();
    const conversation = await provider().connect({ apiKey: KEY }, controller.signal);
    const peer = await peerReady;
    controller.abort();
    expect(await peer.closed).toEqual({ code: 1000 });
    expect(await new ConversationReader(conversation).rest()).toEqual([]);
  });
});
