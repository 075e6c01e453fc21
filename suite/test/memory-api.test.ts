import { randomUUID } from "node:crypto";
import { readCatalogFile } from "@avatar/catalog";
import { SessionMode } from "@avatar/contracts/common";
import { SessionEndedSchema, SessionState } from "@avatar/contracts/sessions";
import { Tier } from "@avatar/contracts/tokens";
import { publishEvent, topics } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Session memories through the public gateway on the whole suite, over real HTTP. Sessions are made
 * with the sessions service's own RPCs (create, start, transcript, stop), as the token endpoint and the
 * pipeline make them; a session's end reaches the memory service as the events.sessions.ended event.
 */

let suite: TestSuite;
let other: { spaceId: string; apiKey: string };
const avatarId = readCatalogFile().demo_space_avatars[0]?.id ?? "";

const keyA = () => ({ "X-API-KEY": suite.apiKey });
const keyB = () => ({ "X-API-KEY": other.apiKey });

beforeAll(async () => {
  suite = await startTestSuite();
  const apiKey = `lak_test_${randomUUID().replaceAll("-", "")}`;
  const created = await suite.clients.tokens.createSpace({ name: "Other space", tier: Tier.PRO, apiKey });
  other = { spaceId: created.space?.id ?? "", apiKey };
  for (const spaceId of [suite.spaceId, other.spaceId]) {
    await suite.clients.sessions.grantCredits({
      spaceId,
      amount: "1000",
      note: "memory tests",
      idempotencyKey: `memory-${spaceId}`,
    });
  }
});
afterAll(async () => {
  await suite?.stop();
});

interface SessionOptions {
  spaceId?: string;
  mode?: SessionMode;
  memoryId?: string;
  transcript?: string[][];
  end?: boolean;
}

/** A session made as in production: created, started, transcript written, stopped (ended). */
async function session(options: SessionOptions = {}): Promise<string> {
  const spaceId = options.spaceId ?? suite.spaceId;
  const sessionId = randomUUID();
  const { sessions } = suite.clients;
  await sessions.createSession({
    spaceId,
    sessionId,
    maxSessionDuration: 600,
    config: { mode: options.mode ?? SessionMode.FULL, avatarId, memoryId: options.memoryId ?? "" },
  });
  await sessions.startSession({ spaceId, sessionId });
  const transcript = options.transcript ?? conversation("a trip to Lisbon");
  if (transcript.length > 0) {
    const start = Date.now();
    await sessions.appendTranscript({
      sessionId,
      entries: transcript.map(([role, text], i) => ({
        role,
        transcript: text,
        absoluteTimestamp: BigInt(start + i),
        entryId: `${sessionId}-${i}`,
      })),
    });
  }
  if (options.end !== false) await sessions.stopSession({ spaceId, sessionId });
  return sessionId;
}

function conversation(topic: string): string[][] {
  return [
    ["user", `Hello, I want to talk about ${topic}. I care most about ${topic} this month.`],
    ["avatar", `Sure, let us plan ${topic} together. What matters most for ${topic}?`],
    ["user", `For ${topic} I prefer quiet places and good food.`],
  ];
}

async function createMemory(sessionId: string, headers = keyA()) {
  return suite.request("POST", "/v1/memory", {
    headers,
    body: { memory_type: "session", session_id: sessionId },
  });
}

async function memoryOf(sessionId: string, headers = keyA()): Promise<string> {
  const res = await createMemory(sessionId, headers);
  expect(res.status).toBe(200);
  return (await json(res)).data.id;
}

/** Slow enough to stay under the endpoint's 10 requests per second while polling. */
const POLL_MS = 200;

/** Polls the memory until `done` holds (a 429 or any other failure just means "not yet"). */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
async function waitForMemory(what: string, memoryId: string, done: (memory: any) => boolean): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await suite.get(`/v1/memory/${memoryId}`, keyA());
    const body = await json(res);
    const memory = res.status === 200 ? body.data : undefined;
    if (memory && done(memory)) return memory;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(memory)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const detail = async (memoryId: string, headers = keyA()) =>
  (await json(await suite.get(`/v1/memory/${memoryId}`, headers))).data;

describe("POST /v1/memory", () => {
  it("creates a memory from an ended FULL session with its transcript", async () => {
    const sessionId = await session();
    const res = await createMemory(sessionId);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.code).toBe(100);
    const m = body.data;
    expect(Object.keys(m).sort()).toEqual(
      [
        "created_at",
        "id",
        "memory_content",
        "memory_content_preview",
        "memory_type",
        "session_episodes",
        "updated_at",
      ].sort(),
    );
    expect(m.memory_type).toBe("session");
    expect(m.session_episodes).toHaveLength(1);
    const [episode] = m.session_episodes;
    expect(Object.keys(episode).sort()).toEqual(["created_at", "sequence_num", "session_id", "summary"]);
    expect(episode).toMatchObject({ session_id: sessionId, sequence_num: 1 });
    expect(episode.summary).toContain("a trip to Lisbon");
    expect(m.memory_content).toContain(episode.summary);
    expect(m.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    expect(await detail(m.id)).toEqual(m);
  });

  it.each([
    ["has not ended", { end: false }, /has not ended/],
    ["is a LITE session", { mode: SessionMode.LITE }, /not a FULL session/],
    ["has no transcript", { transcript: [] }, /no transcript entries/],
  ])("answers 400 when the session %s", async (_name, options, message) => {
    const sessionId = await session(options);
    const res = await createMemory(sessionId);
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body).toMatchObject({ code: 4000, data: null });
    expect(body.message).toMatch(message);
  });

  it("answers 404 for a session of another space or an unknown one", async () => {
    const foreign = await session({ spaceId: other.spaceId });
    for (const id of [foreign, randomUUID()]) {
      const res = await createMemory(id);
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ code: 4040, data: null });
    }
  });

  it("validates the body (422)", async () => {
    const bad = await suite.request("POST", "/v1/memory", {
      headers: keyA(),
      body: { memory_type: "long_term", session_id: "not-a-uuid" },
    });
    expect(bad.status).toBe(422);
    const { detail: issues } = await json(bad);
    expect(issues.map((i: { loc: unknown[]; type: string }) => [i.loc, i.type])).toEqual([
      [["body", "memory_type"], "enum"],
      [["body", "session_id"], "uuid_parsing"],
    ]);
    const missing = await suite.request("POST", "/v1/memory", { headers: keyA(), body: {} });
    expect(
      (await json(missing)).detail.map((i: { loc: unknown[]; type: string }) => [i.loc, i.type]),
    ).toEqual([
      [["body", "memory_type"], "missing"],
      [["body", "session_id"], "missing"],
    ]);
  });

  it("needs an API key", async () => {
    const res = await suite.request("POST", "/v1/memory", {
      body: { memory_type: "session", session_id: randomUUID() },
    });
    expect(res.status).toBe(401);
  });
});

describe("GET /v1/memory", () => {
  it("pages through the space's memories, newest first, with previews", async () => {
    const apiKey = `lak_test_${randomUUID().replaceAll("-", "")}`;
    const space = await suite.clients.tokens.createSpace({ name: "Paging space", tier: Tier.PRO, apiKey });
    const spaceId = space.space?.id ?? "";
    await suite.clients.sessions.grantCredits({
      spaceId,
      amount: "100",
      note: "paging",
      idempotencyKey: `paging-${spaceId}`,
    });
    const headers = { "X-API-KEY": apiKey };
    const ids: string[] = [];
    for (const topic of ["sailing", "chess", "pottery"]) {
      ids.push(await memoryOf(await session({ spaceId, transcript: conversation(topic) }), headers));
    }

    const first = await json(await suite.get("/v1/memory?page_size=2", headers));
    expect(first.data.count).toBe(3);
    expect(first.data.previous).toBeNull();
    expect(first.data.results.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]);
    const item = first.data.results[0];
    expect(Object.keys(item).sort()).toEqual([
      "created_at",
      "id",
      "memory_content_preview",
      "memory_type",
      "updated_at",
    ]);
    expect(item.memory_type).toBe("session");
    expect(item.memory_content_preview).toContain("pottery");
    expect(Array.from(item.memory_content_preview as string).length).toBeLessThanOrEqual(201);

    const next = new URL(first.data.next);
    expect(next.searchParams.get("page")).toBe("2");
    const second = await json(await fetch(first.data.next, { headers }));
    expect(second.data.results.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    expect(second.data.next).toBeNull();
    expect(second.data.previous).not.toBeNull();

    const typed = await json(await suite.get("/v1/memory?type=session&page=1&page_size=100", headers));
    expect(typed.data.count).toBe(3);
    // The demo space's memories are not listed here, nor these there.
    const demo = await json(await suite.get("/v1/memory?page_size=100", keyA()));
    expect(demo.data.results.map((m: { id: string }) => m.id)).not.toContain(ids[0]);
  });

  it("validates the query (422)", async () => {
    for (const [query, loc, type] of [
      ["type=long_term", "type", "enum"],
      ["page=0", "page", "greater_than_equal"],
      ["page_size=101", "page_size", "less_than_equal"],
    ]) {
      const res = await suite.get(`/v1/memory?${query}`, keyA());
      expect(res.status).toBe(422);
      expect((await json(res)).detail[0]).toMatchObject({ loc: ["query", loc], type });
    }
  });
});

describe("GET and DELETE /v1/memory/{memory_id}", () => {
  it("treats another space's memory as missing (404), in reads and deletes", async () => {
    const foreign = await memoryOf(await session({ spaceId: other.spaceId }), keyB());
    expect((await suite.get(`/v1/memory/${foreign}`, keyA())).status).toBe(404);
    expect((await suite.request("DELETE", `/v1/memory/${foreign}`, { headers: keyA() })).status).toBe(404);
    expect((await suite.get(`/v1/memory/${foreign}`, keyB())).status).toBe(200);
  });

  it("answers 422 for ids that are not UUIDs", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await suite.request(method, "/v1/memory/not-a-uuid", { headers: keyA() });
      expect(res.status).toBe(422);
      expect((await json(res)).detail[0]).toMatchObject({ loc: ["path", "memory_id"], type: "uuid_parsing" });
    }
  });

  it("deletes with 204 and no body; the memory and its episodes are gone; a second delete is a 404", async () => {
    const memoryId = await memoryOf(await session());
    const res = await suite.request("DELETE", `/v1/memory/${memoryId}`, { headers: keyA() });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const gone = await suite.get(`/v1/memory/${memoryId}`, keyA());
    expect(gone.status).toBe(404);
    expect(await json(gone)).toMatchObject({ code: 4040, data: null });
    const again = await suite.request("DELETE", `/v1/memory/${memoryId}`, { headers: keyA() });
    expect(again.status).toBe(404);
  });
});

describe("a memory built from several sessions", () => {
  it("carries one episode per session, in the order the sessions ended, once each", async () => {
    const first = await session({ transcript: conversation("violin lessons") });
    const memoryId = await memoryOf(first);
    const later: string[] = [];
    for (const topic of ["cello repairs", "piano tuning"]) {
      const id = await session({ memoryId, transcript: conversation(topic) });
      later.push(id);
      // Each end is an event; waiting for its episode keeps the end order the episode order.
      await waitForMemory("the episode", memoryId, (m) => m.session_episodes.length === later.length + 1);
    }
    const m = await detail(memoryId);
    expect(
      m.session_episodes.map((e: { session_id: string; sequence_num: number }) => [
        e.sequence_num,
        e.session_id,
      ]),
    ).toEqual([
      [1, first],
      [2, later[0]],
      [3, later[1]],
    ]);
    const content: string = m.memory_content;
    const positions = ["violin lessons", "cello repairs", "piano tuning"].map((t) => content.indexOf(t));
    expect(positions.every((p, i) => p >= 0 && (i === 0 || p > (positions[i - 1] ?? 0)))).toBe(true);
    expect(content.startsWith((m.memory_content_preview as string).replace(/…$/, ""))).toBe(true);

    // The end of the second session delivered again (a redelivery): no second episode.
    const redelivered = await suite.clients.sessions.getSession({
      spaceId: suite.spaceId,
      sessionId: later[0] ?? "",
    });
    expect(redelivered.session?.state).toBe(SessionState.ENDED);
    await publishEvent(
      suite.bus,
      topics.sessionEnded,
      create(SessionEndedSchema, { session: redelivered.session }),
      `${later[0]}.redelivered`,
    );
    const marker = await session({ memoryId, transcript: conversation("drum kits") });
    const after = await waitForMemory("the marker's episode", memoryId, (x) =>
      x.session_episodes.some((e: { session_id: string }) => e.session_id === marker),
    );
    expect(after.session_episodes.map((e: { session_id: string }) => e.session_id)).toEqual([
      first,
      ...later,
      marker,
    ]);
    expect(after.session_episodes.map((e: { sequence_num: number }) => e.sequence_num)).toEqual([1, 2, 3, 4]);
  });

  it("adds no episode for a session that ended without a transcript", async () => {
    const memoryId = await memoryOf(await session());
    await session({ memoryId, transcript: [] });
    const marker = await session({ memoryId, transcript: conversation("bird watching") });
    const after = await waitForMemory("the marker's episode", memoryId, (x) =>
      x.session_episodes.some((e: { session_id: string }) => e.session_id === marker),
    );
    expect(after.session_episodes).toHaveLength(2);
  });
});
