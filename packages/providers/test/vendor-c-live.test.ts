import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VendorCLive } from "../src/realtime/vendor-c-live.js";
import {
  type Conversation,
  type ConversationEvent,
  type ConversationOptions,
  ProviderError,
} from "../src/types.js";
import { ConversationReader } from "./servers/conversation-reader.js";
import { chunks, concat, rms, silence, tone } from "./servers/realtime-audio-fixtures.js";
import { VendorCLiveServer, type VendorCPeer } from "./servers/vendor-c-live-server.js";

const KEY = "live-key-123";
const RATE = 24_000;
const MODEL_25 = "vendorC-2.5-flash-native-audio-preview-12-2025";
let server: VendorCLiveServer;
let open: Conversation[];

beforeEach(async () => {
  server = await VendorCLiveServer.start(KEY);
  open = [];
});
afterEach(async () => {
  for (const conversation of open) conversation.close();
  await server.transport.close();
});

function provider(): VendorCLive {
  return new VendorCLive({ baseUrl: server.url });
}

async function connect(
  options: Partial<ConversationOptions> = {},
): Promise<{ conversation: Conversation; peer: VendorCPeer; reader: ConversationReader }> {
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

/** Speaks a loud 300 ms and then 600 ms of silence, in 100 ms chunks. */
function speak(conversation: Conversation): void {
  for (const chunk of chunks(concat([tone(RATE, 300), silence(RATE, 600)]), RATE, 100))
    conversation.sendAudio(chunk);
}

describe("VendorCLive", () => {
  it("connects with the key in the query and sends the setup first, waiting for setupComplete", async () => {
    const { peer } = await connect({
      instructions: "You are Ava.",
      voice: "Kore",
      temperature: 0.7,
      language: "de-DE",
    });
    const handshake = server.transport.handshakes[0];
    expect(handshake?.url).toBe(`/ws/live.v1beta.BidiGenerateContent?key=${KEY}`);
    expect(peer.received.items).toEqual([
      {
        setup: {
          model: "models/vendorC-3.1-flash-live-preview",
          generationConfig: {
            responseModalities: ["AUDIO"],
            speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Kore" } } },
            temperature: 0.7,
          },
          systemInstruction: { parts: [{ text: "You are Ava." }] },
          inputAudioTranscription: {},
          outputAudioTranscription: {},
        },
      },
    ]);
    expect(peer.violations).toEqual([]);
  });

  it("uses the default voice and the 2.5 model when asked", async () => {
    const { peer } = await connect({ model: MODEL_25 });
    expect(peer.received.items[0]).toMatchObject({
      setup: {
        model: `models/${MODEL_25}`,
        generationConfig: { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Puck" } } } },
      },
    });
  });

  it("streams the user's audio resampled to 16 kHz, declared as such, at the same loudness", async () => {
    const { conversation, peer } = await connect();
    const sent = tone(RATE, 600, 300);
    for (const chunk of chunks(sent, RATE, 20)) conversation.sendAudio(chunk);
    // The 30th audio message is parsed in the same turn as it is recorded.
    await peer.received.waitFor(() => peer.received.items.length === 31);

    const inputs = peer.received.items.slice(1) as { realtimeInput: { audio: { mimeType: string } } }[];
    expect(inputs.every((m) => m.realtimeInput.audio.mimeType === "audio/pcm;rate=16000")).toBe(true);
    const received = concat(peer.audio);
    expect(Math.abs(received.length / 2 - (sent.length / 2) * (2 / 3))).toBeLessThanOrEqual(2);
    expect(rms(received) / rms(sent)).toBeGreaterThan(0.95);
    expect(rms(received) / rms(sent)).toBeLessThan(1.05);
    expect(peer.violations).toEqual([]);
  });

  it.each([
    ["3.1 (several contents per message)", undefined],
    ["2.5 (one content per message)", MODEL_25],
  ])("maps a user turn on the %s family to transcripts, audio and turn_done", async (_family, model) => {
    const { conversation, peer, reader } = await connect(model ? { model } : {});
    const answer = [tone(RATE, 100, 440), tone(RATE, 100, 550)];
    peer.responses.push({ audio: answer, transcript: ["Guten ", "Tag."] });
    speak(conversation);

    const events = await reader.until("turn_done");
    expect(withoutAudio(events)).toEqual([
      { type: "user_transcript", text: "hello ", final: false },
      { type: "user_transcript", text: "there", final: false },
      { type: "user_transcript", text: "hello there", final: true },
      { type: "agent_transcript", text: "Guten ", final: false },
      { type: "agent_transcript", text: "Tag.", final: false },
      { type: "agent_transcript", text: "Guten Tag.", final: true },
      { type: "turn_done" },
    ]);
    expect(audioOf(events)).toEqual(answer);
    expect(events.map((e) => e.type).slice(3, 7)).toEqual([
      "audio",
      "agent_transcript",
      "audio",
      "agent_transcript",
    ]);
    expect(peer.violations).toEqual([]);
  });

  it("sends text as realtime input on the 3.1 family and as a client turn on the 2.5 family", async () => {
    const later = await connect();
    later.conversation.sendText?.("Say hi");
    await later.reader.until("turn_done");
    expect(later.peer.received.items[1]).toEqual({ realtimeInput: { text: "Say hi" } });
    expect(later.peer.violations).toEqual([]);

    const older = await connect({ model: MODEL_25 });
    older.conversation.sendText?.("Say hi");
    await older.reader.until("turn_done");
    expect(older.peer.received.items[1]).toEqual({
      clientContent: { turns: [{ role: "user", parts: [{ text: "Say hi" }] }], turnComplete: true },
    });
    expect(older.peer.violations).toEqual([]);
  });

  it("converts the model's audio to 24 kHz when it comes at another rate", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({ audio: [tone(16_000, 300)], transcript: ["Hi"], rate: 16_000 });
    conversation.sendText?.("hello");
    const [pcm] = audioOf(await reader.until("turn_done"));
    expect(Math.abs((pcm?.length ?? 0) / 2 - 7_200)).toBeLessThanOrEqual(2);
  });

  it("reports the server's interruption when the user speaks over the model", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({
      audio: [tone(RATE, 100), tone(RATE, 100)],
      transcript: ["Well ", "then"],
      holdAfter: 1,
    });
    conversation.sendText?.("Explain");
    await reader.until("audio");

    speak(conversation);
    expect(withoutAudio(await reader.until("interrupted"))).toEqual([
      { type: "agent_transcript", text: "Well ", final: false },
      { type: "interrupted" },
    ]);
    const next = await reader.until("turn_done");
    expect(next).toContainEqual({ type: "user_transcript", text: "hello there", final: true });
    expect(peer.violations).toEqual([]);
  });

  it("drops the rest of the model's turn after interrupt(), then hears the next turn", async () => {
    const { conversation, peer, reader } = await connect();
    peer.responses.push({
      audio: [tone(RATE, 100), tone(RATE, 100), tone(RATE, 100)],
      transcript: ["a ", "b ", "c"],
      holdAfter: 1,
    });
    conversation.sendText?.("Count");
    await reader.until("agent_transcript");

    conversation.interrupt();
    peer.release();
    expect(await reader.until("turn_done")).toEqual([{ type: "turn_done" }]);

    conversation.sendText?.("Again");
    expect(audioOf(await reader.until("turn_done"))).toHaveLength(1);
  });

  it("does not drop the next turn when interrupt() comes while the model is silent", async () => {
    const { conversation, reader } = await connect();
    conversation.interrupt();
    conversation.sendText?.("hello");
    expect(audioOf(await reader.until("turn_done"))).toHaveLength(1);
  });

  it("maps the close that ends a session at setup: bad key, exhausted quota, unknown model", async () => {
    const keyPeer = server.transport.nextPeer();
    const key = await rejection(provider().connect({ apiKey: "wrong" }));
    await keyPeer;
    expect(key.kind).toBe("unauthorized");
    expect(key.message).toContain("1008 API key not valid");

    const quotaPeer = server.transport.nextPeer().then((peer) => {
      peer.quotaExceeded = true;
    });
    const quota = await rejection(provider().connect({ apiKey: KEY }));
    await quotaPeer;
    expect(quota.kind).toBe("rate_limited");
    expect(quota.message).toContain("1011");

    const model = await rejection(provider().connect({ apiKey: KEY, model: "vendorC-9" }));
    expect(model.kind).toBe("bad_request");
    expect(model.message).toContain("not found");
  });

  it("maps HTTP 429 and 403 at the handshake", async () => {
    server.transport.refuseNext({
      status: 429,
      headers: { "retry-after": "30" },
      body: { error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED" } },
    });
    const limited = await rejection(provider().connect({ apiKey: KEY }));
    expect(limited.kind).toBe("rate_limited");
    expect(limited.message).toContain("retry after 30 s");

    server.transport.refuseNext({
      status: 403,
      body: { error: { code: 403, message: "Permission denied", status: "PERMISSION_DENIED" } },
    });
    expect((await rejection(provider().connect({ apiKey: KEY }))).kind).toBe("unauthorized");
  });

  it("reports goAway, malformed frames and a quota close during the session", async () => {
    const { peer, reader } = await connect();
    peer.send({ goAway: { timeLeft: "10s" } });
    const [away] = await reader.until("error");
    expect(away?.type === "error" && away.error.message).toContain("ends the connection in 10s");

    peer.sendRaw("not json");
    const [malformed] = await reader.until("error");
    expect(malformed?.type === "error" && malformed.error.kind).toBe("unavailable");

    peer.closeWith(1011, "Resource exhausted: quota exceeded for this project");
    const rest = await reader.rest();
    expect(rest).toHaveLength(1);
    expect(rest[0]?.type === "error" && rest[0].error.kind).toBe("rate_limited");
  });

  it("reports a dropped connection and ends the events", async () => {
    const { peer, reader } = await connect();
    peer.drop();
    const events = await reader.rest();
    expect(events).toHaveLength(1);
    expect(events[0]?.type === "error" && events[0].error.kind).toBe("unavailable");
  });

  it("closes cleanly: the server sees 1000 and the events end", async () => {
    const { conversation, peer, reader } = await connect();
    conversation.close();
    expect((await peer.closed).code).toBe(1000);
    expect(await reader.rest()).toEqual([]);
  });
});
