import { randomUUID } from "node:crypto";
import { TranscriptEntrySchema } from "@avatar/contracts/sessions";
import { create } from "@bufbuild/protobuf";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChatCompletionsServer } from "../../../packages/providers/test/servers/chat-completions-server.js";
import { VendorATtsServer } from "../../../packages/providers/test/servers/vendor-a-tts-server.js";
import type { FullMode } from "../src/full/index.js";
import { clientEvent, RecordingSession } from "./full-harness.js";
import { startFull } from "./full-rig.js";
import { FakeServices } from "./providers-fakes.js";

const SENTENCE_MS = 300;
let chat: ChatCompletionsServer;
let tts: VendorATtsServer;
let env: Record<string, string>;
let fakes: FakeServices;
const modes: FullMode[] = [];

beforeAll(async () => {
  chat = await ChatCompletionsServer.start({ apiKey: "managed-b" });
  const audio = new Uint8Array((24_000 * 2 * SENTENCE_MS) / 1000).fill(3);
  tts = await new VendorATtsServer({ apiKey: "managed-a", audio, chunkBytes: 4800 }).start();
});
afterAll(async () => {
  await chat.close();
  await tts.stop();
});
beforeEach(() => {
  fakes = new FakeServices();
  env = {
    PROVIDER_VENDORA_URL: tts.baseUrl,
    PROVIDER_VENDORA_API_KEY: "managed-a",
    PROVIDER_VENDORB_URL: chat.baseUrl,
    PROVIDER_VENDORB_API_KEY: "managed-b",
  };
});
afterEach(async () => {
  for (const mode of modes.splice(0)) await mode.stop();
});

function session(
  config: ConstructorParameters<typeof RecordingSession>[0] = {},
  spaceId?: string,
): RecordingSession {
  return new RecordingSession({ voiceId: fakes.addVoice({ vendorA: "va-1" }), ...config }, spaceId);
}

function run(s: RecordingSession, environment = env): FullMode {
  const mode = startFull(s, environment, fakes);
  modes.push(mode);
  mode.onConnected("conn-1", true);
  return mode;
}

type Message = { role: string; content: string };
const messagesOf = (index: number) => chat.requests[index]?.body?.messages as Message[];

describe("avatar.say answers through the language model", () => {
  it("streams the answer as chunks, speaks it sentence by sentence, and ends with the transcription", async () => {
    const s = session({
      prompt: "You are the museum guide for Ada.",
      dynamicVariables: { values: { visitor: { kind: { case: "stringValue", value: "Ada" } } } },
      memoryId: "",
      llmSettings: { provider: "vendorB", model: "gpt-4o-mini" },
    });
    const mode = run(s);
    const requestsBefore = chat.requests.length;
    chat.enqueue({ kind: "stream", pieces: ["Good ", "morning", " Ada. ", "The hall ", "opens at nine."] });
    const say = clientEvent("avatar.say", { text: "When does the hall open?" });
    mode.handle(say);
    const ended = await s.waitFor("avatar.speak_ended");

    // Every event of the turn carries the request's id; text streams first, speech ends the turn.
    const mine = s.events.filter((e) => e.sourceEventId === say.eventId).map((e) => e.type);
    expect(mine.filter((t) => t !== "avatar.transcription.chunk")).toEqual([
      "avatar.speak_started",
      "avatar.transcription",
      "avatar.speak_ended",
    ]);
    expect(mine.lastIndexOf("avatar.transcription.chunk")).toBeLessThan(mine.indexOf("avatar.transcription"));
    expect(mine.indexOf("avatar.transcription.chunk")).toBeLessThan(mine.indexOf("avatar.speak_started"));
    expect(s.ofType("avatar.transcription.chunk").map((e) => e.text)).toEqual([
      "Good ",
      "morning",
      " Ada. ",
      "The hall ",
      "opens at nine.",
    ]);
    expect(s.ofType("avatar.transcription")).toEqual([
      expect.objectContaining({ text: "Good morning Ada. The hall opens at nine.", interrupted: false }),
    ]);
    // Two sentences of SENTENCE_MS each played out in real time.
    const started = s.ofType("avatar.speak_started")[0];
    expect(ended.at - (started?.at ?? 0)).toBeGreaterThanOrEqual(2 * SENTENCE_MS - 20);
    expect(s.transcript.map((e) => [e.role, e.transcript])).toEqual([
      ["user", "When does the hall open?"],
      ["avatar", "Good morning Ada. The hall opens at nine."],
    ]);

    const request = chat.requests[requestsBefore];
    expect(request?.headers.authorization).toBe("Bearer managed-b");
    expect(request?.body?.model).toBe("gpt-4o-mini");
    const [system, user] = messagesOf(requestsBefore);
    expect(system?.role).toBe("system");
    expect(system?.content).toContain("You are the museum guide for Ada.");
    expect(system?.content).toContain("visitor: Ada");
    expect(user).toEqual({ role: "user", content: "When does the hall open?" });
    expect(tts.connections.slice(-2).map((c) => (c.messages[1] as { text: string }).text)).toEqual([
      "Good morning Ada. ",
      "The hall opens at nine. ",
    ]);
    expect(s.types(["error", "warning"])).toEqual([]);
  });

  it("sends chunks and starts speaking while the model is still writing", async () => {
    const s = session();
    const mode = run(s);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    chat.enqueue({ kind: "stream", pieces: ["The first sentence. The sec", "ond one."], gate });
    mode.handle(clientEvent("avatar.say", { text: "Talk" }));
    const chunk = await s.waitFor("avatar.transcription.chunk");
    expect(chunk.text).toBe("The first sentence. The sec");
    await s.waitFor("avatar.speak_started");
    release();
    await s.waitFor("avatar.speak_ended");
    expect(s.ofType("avatar.transcription").at(-1)?.text).toBe("The first sentence. The second one.");
  });

  it("answers with the attached memory and the conversation so far (avatar.speak_response too)", async () => {
    const spaceId = randomUUID();
    const memoryId = fakes.addMemory(spaceId, "The user likes tea.");
    const s = session({ memoryId }, spaceId);
    const mode = run(s);
    const first = chat.requests.length;
    chat.enqueue({ kind: "stream", pieces: ["Hello."] });
    mode.handle(clientEvent("avatar.say", { text: "Hi" }));
    await s.waitFor("avatar.speak_ended");
    chat.enqueue({ kind: "stream", pieces: ["Tea, of course."] });
    mode.handle(clientEvent("avatar.speak_response", { text: "What do I like?" }));
    await s.waitFor("avatar.speak_ended", { from: s.events.length });

    expect(messagesOf(first)?.[0]?.content).toContain("The user likes tea.");
    expect(messagesOf(first + 1)?.slice(1)).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "What do I like?" },
    ]);
    expect(chat.requests[first]?.body?.model).toBe("gpt-5.4-nano");
  });

  it("goes on from the transcript in a session taken over, without speaking the opening text again", async () => {
    const s = session({ openingText: "Welcome back to the shop." });
    s.resumed = {
      transcript: [
        { role: "user", transcript: "My name is Ada.", entryId: "t1" },
        { role: "avatar", transcript: "Nice to meet you, Ada.", entryId: "t2" },
      ].map((e) => create(TranscriptEntrySchema, e)),
    };
    const mode = run(s);
    const first = chat.requests.length;
    chat.enqueue({ kind: "stream", pieces: ["You are Ada."] });
    mode.handle(clientEvent("avatar.say", { text: "What is my name?" }));
    await s.waitFor("avatar.speak_ended");
    expect(messagesOf(first)?.slice(1)).toEqual([
      { role: "user", content: "My name is Ada." },
      { role: "assistant", content: "Nice to meet you, Ada." },
      { role: "user", content: "What is my name?" },
    ]);
    const spoken = s.events.filter((e) => e.type === "avatar.transcription").map((e) => e.text);
    expect(spoken).toEqual(["You are Ada."]);
  });

  it("goes on without memory when the memory service fails (one warning)", async () => {
    const s = session({ memoryId: "8a0a7d5e-0000-4000-8000-000000000001" });
    fakes.memoryDown = true;
    const mode = run(s);
    chat.enqueue({ kind: "stream", pieces: ["Still answering."] });
    mode.handle(clientEvent("avatar.say", { text: "Hello?" }));
    await s.waitFor("avatar.speak_ended");
    expect(s.ofType("warning")).toEqual([
      expect.objectContaining({
        warning: { type: "provider_unavailable", message: expect.stringContaining("memory") },
      }),
    ]);
  });
});

describe("failures keep the session running", () => {
  it("a 429 from the language model is an error event for that request; the next one is answered", async () => {
    const s = session();
    const mode = run(s);
    chat.enqueue({ kind: "status", status: 429, retryAfter: "7" });
    const refused = clientEvent("avatar.say", { text: "one" });
    mode.handle(refused);
    const error = await s.waitFor("error");
    expect(error).toMatchObject({
      sourceEventId: refused.eventId,
      error: {
        type: "rate_limited",
        message: expect.stringMatching(/limiting requests.* \(request id [0-9a-f-]{36}\)$/),
      },
    });
    // The provider's own words go to the log only, under the request id the client was given.
    const message = (error.error as { message: string }).message;
    const requestId = /request id ([0-9a-f-]{36})/.exec(message)?.[1];
    expect(s.logLines.find((l) => l.includes(requestId ?? "-"))).toContain("429");
    expect(s.ofType("avatar.speak_started")).toEqual([]);

    chat.enqueue({ kind: "stream", pieces: ["Back again."] });
    const next = clientEvent("avatar.say", { text: "two" });
    mode.handle(next);
    const ended = await s.waitFor("avatar.speak_ended");
    expect(ended.sourceEventId).toBe(next.eventId);
    // The refused request's text stays in the conversation: the user did ask it.
    expect(s.transcript.map((e) => e.transcript)).toEqual(["one", "two", "Back again."]);
  });

  it("a model failing mid-answer: what was spoken stays, a warning says the rest failed", async () => {
    const s = session();
    const mode = run(s);
    chat.enqueue({
      kind: "stream-error",
      after: ["Fine, thanks. ", "And you"],
      error: { message: "The server had an error", type: "server_error", code: null },
    });
    const say = clientEvent("avatar.say", { text: "How are you?" });
    mode.handle(say);
    const ended = await s.waitFor("avatar.speak_ended");
    expect(ended.interrupted).toBe(false);
    expect(s.ofType("warning")).toEqual([
      expect.objectContaining({
        sourceEventId: say.eventId,
        warning: expect.objectContaining({ type: "provider_unavailable" }),
      }),
    ]);
    expect(s.ofType("avatar.transcription").at(-1)?.text).toBe("Fine, thanks.");
    expect(s.transcript.at(-1)).toMatchObject({ role: "avatar", transcript: "Fine, thanks." });
  });

  it("speech synthesis refused with 429: an error event, and later requests still run", async () => {
    const busy = await new VendorATtsServer({
      apiKey: "managed-a",
      audio: new Uint8Array(4800),
      chunkBytes: 4800,
      failure: { type: "refuse", status: 429, body: '{"detail":{"status":"too_many_concurrent_requests"}}' },
    }).start();
    try {
      const s = session();
      const mode = run(s, { ...env, PROVIDER_VENDORA_URL: busy.baseUrl });
      const repeat = clientEvent("avatar.repeat", { text: "Can you hear me?" });
      mode.handle(repeat);
      const error = await s.waitFor("error");
      expect(error).toMatchObject({ sourceEventId: repeat.eventId, error: { type: "rate_limited" } });
      expect(s.ofType("avatar.speak_started")).toEqual([]);
      expect(s.transcript).toEqual([]);

      chat.enqueue({ kind: "stream", pieces: ["Answer."] });
      const say = clientEvent("avatar.say", { text: "again" });
      mode.handle(say);
      await s.waitFor("error", { from: s.events.indexOf(error) + 1 });
      expect(s.ofType("error").map((e) => e.sourceEventId)).toEqual([repeat.eventId, say.eventId]);
    } finally {
      await busy.stop();
    }
  });

  it("without any language model, avatar.say gets an error event naming it", async () => {
    const s = session();
    const mode = run(s, { PROVIDER_VENDORA_URL: tts.baseUrl, PROVIDER_VENDORA_API_KEY: "managed-a" });
    const say = clientEvent("avatar.say", { text: "Anyone there?" });
    mode.handle(say);
    const error = await s.waitFor("error");
    expect(error).toMatchObject({ sourceEventId: say.eventId, error: { type: "llm_unavailable" } });
    // avatar.repeat needs no model and still works.
    mode.handle(clientEvent("avatar.repeat", { text: "I can still talk." }));
    await s.waitFor("avatar.speak_ended");
  });
});

describe("a sandbox session", () => {
  it("answers through the local model endpoint and speaks with the local synthesizer", async () => {
    const local = await ChatCompletionsServer.start();
    try {
      const s = new RecordingSession({ isSandbox: true, voiceId: "any" });
      const connectionsBefore = tts.connections.length;
      const mode = run(s, { ...env, LOCAL_LLM_URL: local.baseUrl, LOCAL_LLM_MODEL: "tiny-local" });
      local.enqueue({ kind: "stream", pieces: ["Local ", "answer."] });
      mode.handle(clientEvent("avatar.say", { text: "Hello" }));
      await s.waitFor("avatar.speak_ended");
      expect(local.requests).toHaveLength(1);
      expect(local.requests[0]?.body?.model).toBe("tiny-local");
      expect(local.requests[0]?.headers.authorization).toBeUndefined();
      expect(s.ofType("avatar.transcription").at(-1)?.text).toBe("Local answer.");
      // The local synthesizer spoke: the vendorA endpoint in the environment was not used.
      expect(tts.connections.length).toBe(connectionsBefore);
      expect(s.ofType("avatar.speak_started")).toHaveLength(1);
    } finally {
      await local.close();
    }
  });
});
