import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADA, bearer, cookie, grant, key, mint, otherSpace, WAYNE } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/** Session list and entry, transcripts, events delete and credits over real HTTP on the whole suite. */

let suite: TestSuite;
/** A space of its own, so that lists and balances are exactly what this file made. */
let space: { spaceId: string; apiKey: string };
const mine = () => key(space.apiKey);

beforeAll(async () => {
  suite = await startTestSuite({ overrides: { rateLimitStore: { increment: async () => 1 } } });
  space = await otherSpace(suite);
  await grant(suite, "100", space.spaceId);
});
afterAll(async () => {
  await suite?.stop();
});

const mintHere = (body: Record<string, unknown> = {}) =>
  mint(suite, { avatar_id: WAYNE, ...body }, space.apiKey);

describe("GET /v1/sessions and GET /v1/sessions/{id}", () => {
  it("lists active and historic sessions newest first, filtered and paginated", async () => {
    const a = await mintHere();
    const b = await mintHere({ mode: "LITE" });
    const c = await mintHere();
    await suite.request("POST", "/v1/sessions/start", { headers: bearer(b.session_token) });
    await suite.request("POST", "/v1/sessions/stop", { headers: bearer(a.session_token) });

    const list = async (query: string) => {
      const res = await suite.get(`/v1/sessions${query}`, mine());
      expect(res.status).toBe(200);
      return (await json(res)).data;
    };
    const ids = async (query: string) => (await list(query)).results.map((s: { id: string }) => s.id);
    expect(await ids("")).toEqual([c.session_id, b.session_id, a.session_id]);
    expect(await ids("?type=active")).toEqual([c.session_id, b.session_id]);
    expect(await ids("?type=historic")).toEqual([a.session_id]);
    expect(await ids(`?avatar_id=${WAYNE}`)).toHaveLength(3);
    expect(await ids(`?avatar_id=${ADA}`)).toEqual([]);
    expect(await ids(`?embed_id=${crypto.randomUUID()}`)).toEqual([]);
    expect(await ids(`?context_id=${crypto.randomUUID()}`)).toEqual([]);

    const first = await list("?page_size=2");
    expect(first.count).toBe(3);
    expect(first.previous).toBeNull();
    expect(new URL(first.next).searchParams.get("page")).toBe("2");
    const second = (await json(await fetch(first.next, { headers: mine() }))).data;
    expect(second.results.map((s: { id: string }) => s.id)).toEqual([a.session_id]);
    expect(second.next).toBeNull();
  });

  it("shows the session entry with its public fields, end_at and end_reason once ended", async () => {
    const m = await mintHere({ mode: "LITE" });
    const created = (await json(await suite.get(`/v1/sessions/${m.session_id}`, mine()))).data;
    expect(Object.keys(created).sort()).toEqual(
      [
        "api_key_id",
        "created_at",
        "credits_consumed",
        "duration",
        "end_at",
        "end_reason",
        "id",
        "is_sandbox",
        "mode",
        "source",
        "status",
        "updated_at",
      ].sort(),
    );
    expect(created).toMatchObject({
      id: m.session_id,
      status: "CREATED",
      mode: "LITE",
      source: "API",
      is_sandbox: false,
      duration: 0,
      credits_consumed: 0,
      end_at: null,
      end_reason: null,
    });
    expect(created.api_key_id).toMatch(/^[0-9a-f-]{36}$/);
    await suite.request("POST", "/v1/sessions/start", { headers: bearer(m.session_token) });
    await suite.request("POST", "/v1/sessions/stop", { headers: bearer(m.session_token) });
    const ended = (await json(await suite.get(`/v1/sessions/${m.session_id}`, mine()))).data;
    expect(ended).toMatchObject({ status: "ENDED", end_reason: "USER_CLOSED", credits_consumed: 1 });
    expect(Date.parse(ended.end_at)).toBeGreaterThanOrEqual(Date.parse(ended.created_at));
  });

  it("reports another space's session, unknown ids and bad queries properly", async () => {
    const m = await mintHere();
    expect((await suite.get(`/v1/sessions/${m.session_id}`, key(suite.apiKey))).status).toBe(404);
    const missing = await suite.get(`/v1/sessions/${crypto.randomUUID()}`, mine());
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual({ code: 4040, data: null, message: "Session not found" });
    const bad = await suite.get("/v1/sessions/not-a-uuid", mine());
    expect(bad.status).toBe(422);
    expect((await json(bad)).detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "session_id"] });
    const query = await json(await suite.get("/v1/sessions?type=all&page_size=101&avatar_id=x", mine()));
    expect(query.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual([
      [["query", "type"], "enum"],
      [["query", "avatar_id"], "uuid_parsing"],
      [["query", "page_size"], "less_than_equal"],
    ]);
  });
});

describe("GET /v1/sessions/{id}/transcript", () => {
  it("filters on absolute_timestamp and polls with next_timestamp", async () => {
    const m = await mintHere();
    await suite.request("POST", "/v1/sessions/start", { headers: bearer(m.session_token) });
    const t0 = Date.now();
    await suite.clients.sessions.appendTranscript({
      sessionId: m.session_id,
      entries: [
        { role: "user", transcript: "Hello", absoluteTimestamp: BigInt(t0), entryId: "e1" },
        { role: "avatar", transcript: "Hi there", absoluteTimestamp: BigInt(t0 + 10), entryId: "e2" },
      ],
    });
    const read = async (query = "", creds: Record<string, string> = mine()) => {
      const res = await suite.get(`/v1/sessions/${m.session_id}/transcript${query}`, creds);
      expect(res.status).toBe(200);
      return (await json(res)).data;
    };
    const all = await read();
    expect(all.session_active).toBe(true);
    expect(all.transcript_data).toEqual([
      {
        role: "user",
        transcript: "Hello",
        absolute_timestamp: t0,
        relative_timestamp: expect.any(Number),
      },
      {
        role: "avatar",
        transcript: "Hi there",
        absolute_timestamp: t0 + 10,
        relative_timestamp: expect.any(Number),
      },
    ]);
    expect(all.next_timestamp).toBe(t0 + 11);
    expect((await read(`?start_timestamp=${t0}&end_timestamp=${t0 + 10}`)).transcript_data).toHaveLength(1);
    const idle = await read(`?start_timestamp=${all.next_timestamp}`);
    expect(idle).toEqual({ session_active: true, transcript_data: [], next_timestamp: t0 + 11 });

    await suite.clients.sessions.appendTranscript({
      sessionId: m.session_id,
      entries: [{ role: "user", transcript: "Bye", absoluteTimestamp: BigInt(t0 + 20), entryId: "e3" }],
    });
    await suite.request("POST", "/v1/sessions/stop", { headers: bearer(m.session_token) });
    // The session's own token stops working once it has ended (contract section 2); the key reads on.
    const refused = await suite.get(`/v1/sessions/${m.session_id}/transcript`, cookie(m.session_token));
    expect(refused.status).toBe(401);
    const next = await read(`?start_timestamp=${idle.next_timestamp}`);
    expect(next.transcript_data.map((e: { transcript: string }) => e.transcript)).toEqual(["Bye"]);
    expect(next.session_active).toBe(false);
    expect(next.next_timestamp).toBe(t0 + 21);
  });

  it("validates the timestamps", async () => {
    const m = await mintHere();
    const res = await suite.get(
      `/v1/sessions/${m.session_id}/transcript?start_timestamp=soon&end_timestamp=-1`,
      mine(),
    );
    expect(res.status).toBe(422);
    expect((await json(res)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ["query", "start_timestamp"],
      ["query", "end_timestamp"],
    ]);
  });
});

describe("DELETE /v1/sessions/{id}/events", () => {
  it("removes every event and transcript entry, with an API key or the session's bearer token", async () => {
    const m = await mintHere();
    const other = await mintHere();
    await suite.clients.sessions.appendTranscript({
      sessionId: m.session_id,
      entries: [{ role: "user", transcript: "x", absoluteTimestamp: 1n, entryId: "a" }],
    });
    expect(
      (
        await suite.request("DELETE", `/v1/sessions/${m.session_id}/events`, {
          headers: bearer(other.session_token),
        })
      ).status,
    ).toBe(404);
    expect(
      (await suite.request("DELETE", `/v1/sessions/${m.session_id}/events`, { headers: key(suite.apiKey) }))
        .status,
    ).toBe(404);
    expect(
      (
        await suite.request("DELETE", `/v1/sessions/${m.session_id}/events`, {
          headers: cookie(m.session_token),
        })
      ).status,
    ).toBe(401);

    const res = await suite.request("DELETE", `/v1/sessions/${m.session_id}/events`, { headers: mine() });
    expect(res.status).toBe(200);
    expect((await json(res)).data).toEqual({ deleted_events: 1, deleted_transcript_entries: 1 });
    const transcript = (await json(await suite.get(`/v1/sessions/${m.session_id}/transcript`, mine()))).data;
    expect(transcript.transcript_data).toEqual([]);
    expect((await suite.get(`/v1/sessions/${m.session_id}`, mine())).status).toBe(200);

    const byToken = await suite.request("DELETE", `/v1/sessions/${other.session_id}/events`, {
      headers: bearer(other.session_token),
    });
    expect((await json(byToken)).data).toEqual({ deleted_events: 1, deleted_transcript_entries: 0 });
  });
});

describe("GET /v1/users/credits", () => {
  it("answers the balance as a decimal string, per space", async () => {
    const fresh = await otherSpace(suite);
    const read = async (apiKey: string) => {
      const res = await suite.get("/v1/users/credits", key(apiKey));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("10");
      return (await json(res)).data;
    };
    expect(await read(fresh.apiKey)).toEqual({ credits_left: "0" });
    await suite.clients.sessions.grantCredits({
      spaceId: fresh.spaceId,
      amount: "12.5",
      idempotencyKey: "g1",
    });
    await suite.clients.sessions.grantCredits({
      spaceId: fresh.spaceId,
      amount: "12.5",
      idempotencyKey: "g1",
    });
    expect(await read(fresh.apiKey)).toEqual({ credits_left: "12.5" });
    const m = await mint(suite, { avatar_id: WAYNE }, fresh.apiKey);
    await suite.request("POST", "/v1/sessions/start", { headers: bearer(m.session_token) });
    expect(await read(fresh.apiKey)).toEqual({ credits_left: "10.5" });
    expect((await suite.get("/v1/users/credits")).status).toBe(401);
  });
});
