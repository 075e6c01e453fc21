import { randomUUID } from "node:crypto";
import { readCatalogFile } from "@avatar/catalog";
import { SecretType } from "@avatar/contracts/agents";
import { SessionMode } from "@avatar/contracts/common";
import { Tier } from "@avatar/contracts/tokens";
import { collectingLogger } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../services/memory/test/chat-server.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Memories across services: the token endpoint's memory reference (ResolveMemory), a session running
 * with the memory it resolved, and summaries written by the space's own language model (an LLM
 * configuration of the agents service pointing at a local chat-completions server).
 */

const API_KEY = "sk-memory-flow-0123456789abcdef";
const MODEL = "gpt-4o-mini";

let suite: TestSuite;
let chat: ChatServer;
const { log, lines: logLines } = collectingLogger();
let llmSpace: { spaceId: string; apiKey: string };
const avatarId = readCatalogFile().demo_space_avatars[0]?.id ?? "";
const keyA = () => ({ "X-API-KEY": suite.apiKey });

beforeAll(async () => {
  chat = await startChatServer({ apiKey: API_KEY, model: MODEL });
  // The operator allowed the self-hosted model on loopback (the egress guard refuses loopback otherwise).
  suite = await startTestSuite({ log, env: { EGRESS_ALLOW: new URL(chat.baseUrl).host } });
  const apiKey = `lak_test_${randomUUID().replaceAll("-", "")}`;
  const created = await suite.clients.tokens.createSpace({ name: "LLM space", tier: Tier.PRO, apiKey });
  llmSpace = { spaceId: created.space?.id ?? "", apiKey };
  for (const spaceId of [suite.spaceId, llmSpace.spaceId]) {
    await suite.clients.sessions.grantCredits({
      spaceId,
      amount: "1000",
      note: "memory",
      idempotencyKey: `m-${spaceId}`,
    });
  }
});
afterAll(async () => {
  await suite?.stop();
  await chat?.close();
});

async function endedSession(spaceId: string, topic: string, memoryId = ""): Promise<string> {
  const sessionId = randomUUID();
  const { sessions } = suite.clients;
  await sessions.createSession({
    spaceId,
    sessionId,
    maxSessionDuration: 600,
    config: { mode: SessionMode.FULL, avatarId, memoryId },
  });
  await runAndEnd(spaceId, sessionId, topic);
  return sessionId;
}

async function runAndEnd(spaceId: string, sessionId: string, topic: string): Promise<void> {
  const { sessions } = suite.clients;
  await sessions.startSession({ spaceId, sessionId });
  await sessions.appendTranscript({
    sessionId,
    entries: [
      {
        role: "user",
        transcript: `Let us talk about ${topic}, I really like ${topic}.`,
        entryId: `${sessionId}-0`,
      },
      {
        role: "avatar",
        transcript: `Great, ${topic} it is. Tell me more about ${topic}.`,
        entryId: `${sessionId}-1`,
      },
    ],
  });
  await sessions.stopSession({ spaceId, sessionId });
}

const token = (body: unknown, headers = keyA()) =>
  suite.request("POST", "/v1/sessions/token", { headers, body });

/** Slow enough to stay under the endpoint's 10 requests per second while polling. */
const POLL_MS = 200;

/** Polls the memory until `done` holds (a 429 or any other failure just means "not yet"). */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
async function waitForMemory(memoryId: string, done: (memory: any) => boolean): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await suite.get(`/v1/memory/${memoryId}`, keyA());
    const body = await json(res);
    const memory = res.status === 200 ? body.data : undefined;
    if (memory && done(memory)) return memory;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(memory)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

describe("the token endpoint's memory reference", () => {
  it("creates a memory from prev_session_id synchronously, and the new session's end adds its episode", async () => {
    const prev = await endedSession(suite.spaceId, "mountain hiking");
    const before = (await json(await suite.get("/v1/memory?page_size=100", keyA()))).data.count;
    const res = await token({ avatar_id: avatarId, memory: { prev_session_id: prev } });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    const { session_id: sessionId } = (await json(res)).data;

    const list = (await json(await suite.get("/v1/memory?page_size=100", keyA()))).data;
    expect(list.count).toBe(before + 1);
    const memoryId = list.results[0].id;
    const { session } = await suite.clients.sessions.getSession({ spaceId: suite.spaceId, sessionId });
    expect(session?.memoryId).toBe(memoryId);

    // A second token for the same previous session reuses the memory.
    const again = await token({ avatar_id: avatarId, memory: { prev_session_id: prev } });
    expect(again.status).toBe(200);
    expect((await json(await suite.get("/v1/memory?page_size=100", keyA()))).data.count).toBe(before + 1);

    await runAndEnd(suite.spaceId, sessionId, "trail running");
    const m = await waitForMemory(memoryId, (x) => x.session_episodes.length === 2);
    expect(
      m.session_episodes.map((e: { session_id: string; sequence_num: number }) => [
        e.sequence_num,
        e.session_id,
      ]),
    ).toEqual([
      [1, prev],
      [2, sessionId],
    ]);
    expect(m.memory_content).toContain("trail running");
  });

  it("attaches session_memory_id; a different memory for prev_session_id is a 400, another space's a 404", async () => {
    const prev = await endedSession(suite.spaceId, "chess openings");
    const create = await suite.request("POST", "/v1/memory", {
      headers: keyA(),
      body: { memory_type: "session", session_id: prev },
    });
    const memoryId = (await json(create)).data.id;

    const same = await token({
      avatar_id: avatarId,
      memory: { prev_session_id: prev, session_memory_id: memoryId },
    });
    expect(same.status).toBe(200);

    const elsewhere = await endedSession(suite.spaceId, "go strategy");
    const different = await token({
      avatar_id: avatarId,
      memory: { prev_session_id: elsewhere, session_memory_id: memoryId },
    });
    expect(different.status).toBe(400);

    const otherKey = { "X-API-KEY": llmSpace.apiKey };
    const foreign = await token({ avatar_id: avatarId, memory: { session_memory_id: memoryId } }, otherKey);
    expect(foreign.status).toBe(404);
  });
});

describe("summaries from the space's language model", () => {
  it("uses the space's LLM configuration and its secret when it has one", async () => {
    const { secret } = await suite.clients.agents.createSecret({
      spaceId: llmSpace.spaceId,
      secretName: "summaries key",
      secretValue: API_KEY,
      secretType: SecretType.VENDORB_API_KEY,
      allowedHosts: ["127.0.0.1"],
    });
    await suite.clients.agents.createLlmConfiguration({
      spaceId: llmSpace.spaceId,
      displayName: "Local model",
      modelName: MODEL,
      secretId: secret?.id ?? "",
      baseUrl: chat.baseUrl,
    });
    chat.behaviour = { kind: "answer", text: "The user likes sea kayaking and wants a guided tour." };
    const sessionId = await endedSession(llmSpace.spaceId, "sea kayaking");
    const res = await suite.request("POST", "/v1/memory", {
      headers: { "X-API-KEY": llmSpace.apiKey },
      body: { memory_type: "session", session_id: sessionId },
    });
    expect(res.status).toBe(200);
    const m = (await json(res)).data;
    expect(m.session_episodes[0].summary).toBe("The user likes sea kayaking and wants a guided tour.");
    const request = chat.requests.at(-1);
    expect(request?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body.model).toBe(MODEL);
    expect(request?.body.messages?.[1]?.content).toContain("user: Let us talk about sea kayaking");
    expect(JSON.stringify(m)).not.toContain(API_KEY);
  });

  it("stores no key a model echoes back, as it is or JSON-escaped (security finding 2)", async () => {
    const escaped = [...API_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
    chat.behaviour = { kind: "answer", text: `The key was ${API_KEY} or "${escaped}".` };
    const sessionId = await endedSession(llmSpace.spaceId, "the api key");
    const res = await suite.request("POST", "/v1/memory", {
      headers: { "X-API-KEY": llmSpace.apiKey },
      body: { memory_type: "session", session_id: sessionId },
    });
    const m = (await json(res)).data;
    expect(m.session_episodes[0].summary).toBe('The key was [secret] or "[secret]".');
    const stored = await suite.request("GET", `/v1/memory/${m.id}`, {
      headers: { "X-API-KEY": llmSpace.apiKey },
    });
    expect(JSON.stringify(await json(stored))).not.toContain(API_KEY);
  });

  it("falls back to the extractive summary when the model fails", async () => {
    chat.behaviour = { kind: "status", status: 503 };
    const sessionId = await endedSession(llmSpace.spaceId, "glacier walks");
    const res = await suite.request("POST", "/v1/memory", {
      headers: { "X-API-KEY": llmSpace.apiKey },
      body: { memory_type: "session", session_id: sessionId },
    });
    expect(res.status).toBe(200);
    expect((await json(res)).data.session_episodes[0].summary).toMatch(
      /^User: Let us talk about glacier walks/,
    );
  });
});

// Last: after every test above has run through the services.
it("never logs the model's key", () => {
  expect(logLines.some((line) => line.includes("language-model summary failed"))).toBe(true);
  expect(logLines.filter((line) => line.includes(API_KEY))).toEqual([]);
});
