import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADA,
  bearer,
  CHLOE,
  cookie,
  grant,
  key,
  type Minted,
  mint,
  otherSpace,
  sessionEntry,
  WAYNE,
} from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Start, stop and keep-alive over real HTTP on the whole suite: every state x operation, both
 * credentials, the cookie, CORS, malformed bodies. Rate limits count every hit as the first here (the
 * limiter has its own tests); the routes' limits show in their headers.
 */

let suite: TestSuite;
const apiKey = () => key(suite.apiKey);

beforeAll(async () => {
  suite = await startTestSuite({ overrides: { rateLimitStore: { increment: async () => 1 } } });
  await grant(suite, "1000");
});
afterAll(async () => {
  await suite?.stop();
});

const post = (path: string, headers: Record<string, string>, body?: unknown) =>
  suite.request("POST", path, body === undefined ? { headers } : { headers, body });
const start = (m: Minted, body?: unknown) => post("/v1/sessions/start", bearer(m.session_token), body);
const stop = (headers: Record<string, string>, body?: unknown) => post("/v1/sessions/stop", headers, body);
const keepAlive = (headers: Record<string, string>, body?: unknown) =>
  post("/v1/sessions/keep-alive", headers, body);

async function startedSession(body: Record<string, unknown> = {}) {
  const m = await mint(suite, body);
  expect((await start(m)).status).toBe(201);
  return m;
}

async function endedSession() {
  const m = await mint(suite);
  expect((await stop(bearer(m.session_token))).status).toBe(200);
  return m;
}

describe("POST /v1/sessions/start", () => {
  it("answers 201 with ws_url (single-use ticket), max_session_duration and the la_session cookie", async () => {
    const m = await mint(suite, { max_session_duration: 900 });
    const res = await start(m);
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).toBe("5");
    const body = await json(res);
    expect(body.code).toBe(100);
    expect(Object.keys(body.data).sort()).toEqual(["max_session_duration", "session_id", "ws_url"]);
    expect(body.data.session_id).toBe(m.session_id);
    expect(body.data.max_session_duration).toBe(900);
    const ws = new URL(body.data.ws_url);
    expect(ws.protocol).toBe("ws:");
    expect(ws.host).toBe(new URL(suite.gatewayUrl).host);
    expect(ws.pathname).toBe("/v1/sessions/ws");
    const ticket = ws.searchParams.get("ticket") ?? "";
    expect(ticket.length).toBeGreaterThan(30);
    expect(res.headers.get("set-cookie")).toBe(
      `la_session=${m.session_token}; HttpOnly; SameSite=None; Path=/`,
    );
    // The ticket opens the session once.
    const redeemed = await suite.clients.sessions.redeemConnectTicket({ ticket });
    expect(redeemed.session?.id).toBe(m.session_id);
    await expect(suite.clients.sessions.redeemConnectTicket({ ticket })).rejects.toThrow();
    expect(await sessionEntry(suite, m.session_id)).toMatchObject({ status: "STARTED", credits_consumed: 2 });
  });

  it("builds wss:// and a Secure cookie behind TLS (X-Forwarded-Proto from a trusted proxy)", async () => {
    const tls = await startTestSuite({
      env: { TRUST_PROXY: "true" },
      overrides: { rateLimitStore: { increment: async () => 1 } },
    });
    try {
      await grant(tls, "10");
      const m = await mint(tls);
      const res = await tls.request("POST", "/v1/sessions/start", {
        headers: { ...bearer(m.session_token), "X-Forwarded-Proto": "https" },
      });
      expect(res.status).toBe(201);
      const ws = new URL((await json(res)).data.ws_url);
      expect(ws.protocol).toBe("wss:");
      expect(ws.host).toBe(new URL(tls.gatewayUrl).host);
      expect(res.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=None; Path=\/; Secure$/);
    } finally {
      await tls.stop();
    }
  });

  it("is idempotent: a second start answers the same session with a fresh ticket, charging nothing more", async () => {
    const m = await mint(suite);
    const first = await json(await start(m));
    const second = await start(m);
    expect(second.status).toBe(201);
    const again = await json(second);
    expect(again.data.session_id).toBe(m.session_id);
    expect(again.data.ws_url).not.toBe(first.data.ws_url);
    expect((await sessionEntry(suite, m.session_id)).credits_consumed).toBe(2);
  });

  it("makes one start out of two concurrent ones", async () => {
    const m = await mint(suite);
    const before = (await json(await suite.get("/v1/users/credits", apiKey()))).data.credits_left;
    const [a, b] = await Promise.all([start(m), start(m)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const after = (await json(await suite.get("/v1/users/credits", apiKey()))).data.credits_left;
    expect(Number(before) - Number(after)).toBe(2);
    const ledger = await suite.clients.sessions.listLedgerEntries({
      spaceId: suite.spaceId,
      sessionId: m.session_id,
    });
    expect(ledger.entries.filter((e) => e.kind === "charge")).toHaveLength(1);
  });

  it("answers CORS with credentials for any origin, preflight included", async () => {
    const m = await mint(suite);
    const res = await post("/v1/sessions/start", {
      ...bearer(m.session_token),
      Origin: "https://app.example",
    });
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    const pre = await suite.request("OPTIONS", "/v1/sessions/stop", {
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  it("answers 409 for an ended session and 402 when the space cannot pay a minute", async () => {
    const ended = await endedSession();
    const res = await start(ended);
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual({ code: 4090, data: null, message: "Session has ended" });

    const poor = await otherSpace(suite);
    const m = await mint(suite, { avatar_id: WAYNE }, poor.apiKey);
    const broke = await start(m);
    expect(broke.status).toBe(402);
    expect(await json(broke)).toMatchObject({ code: 4020, data: null });
    await grant(suite, "2", poor.spaceId);
    expect((await start(m)).status).toBe(201);
  });

  it("takes a session token only (API key 403, none 401) and only its own session (404)", async () => {
    const m = await mint(suite);
    expect((await post("/v1/sessions/start", apiKey())).status).toBe(403);
    expect((await post("/v1/sessions/start", {})).status).toBe(401);
    expect((await post("/v1/sessions/start", bearer("not-a-token"))).status).toBe(401);
    const other = await mint(suite);
    const res = await start(m, { session_id: other.session_id });
    expect(res.status).toBe(404);
    expect((await start(m, { session_id: m.session_id })).status).toBe(201);
  });

  it("starts a sandbox session without charging it, capped at 60 s", async () => {
    const m = await mint(suite, { is_sandbox: true, max_session_duration: 600 });
    const res = await json(await start(m));
    expect(res.data.max_session_duration).toBe(60);
    expect(await sessionEntry(suite, m.session_id)).toMatchObject({ is_sandbox: true, credits_consumed: 0 });
  });

  it("charges LITE at 1 a minute", async () => {
    const m = await startedSession({ avatar_id: CHLOE, mode: "LITE" });
    expect(await sessionEntry(suite, m.session_id)).toMatchObject({ mode: "LITE", credits_consumed: 1 });
  });
});

describe("POST /v1/sessions/stop", () => {
  it("ends a CREATED and a STARTED session with the bearer token (USER_CLOSED by default)", async () => {
    for (const m of [await mint(suite), await startedSession()]) {
      const res = await stop(bearer(m.session_token));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      const body = await json(res);
      expect(body.data).toMatchObject({ id: m.session_id, status: "ENDED", end_reason: "USER_CLOSED" });
      expect(body.data.end_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it("answers an ENDED session (token still valid) with 200, as it ended", async () => {
    const m = await startedSession();
    const first = await json(await stop(bearer(m.session_token), { reason: "USER_DISCONNECTED" }));
    const again = await stop(bearer(m.session_token), { reason: "SERVER_ERROR" });
    expect(again.status).toBe(200);
    const body = await json(again);
    expect(body.data.end_reason).toBe("USER_DISCONNECTED");
    expect(body.data.end_at).toBe(first.data.end_at);
  });

  it("takes an API key with session_id, of its own space only", async () => {
    const m = await startedSession();
    const other = await otherSpace(suite);
    expect((await stop(key(other.apiKey), { session_id: m.session_id })).status).toBe(404);
    const res = await stop(apiKey(), { session_id: m.session_id, reason: "AGENT_HANG_UP" });
    expect(res.status).toBe(200);
    expect((await json(res)).data.end_reason).toBe("AGENT_HANG_UP");
  });

  it("refuses a token naming another session (404) and an API key without session_id (422)", async () => {
    const m = await mint(suite);
    const other = await mint(suite);
    expect((await stop(bearer(m.session_token), { session_id: other.session_id })).status).toBe(404);
    expect((await sessionEntry(suite, other.session_id)).status).toBe("CREATED");
    for (const body of [undefined, {}, { session_id: null }]) {
      const res = await stop(apiKey(), body);
      expect(res.status).toBe(422);
      expect(await json(res)).toEqual({
        detail: [
          {
            type: "missing",
            loc: ["body", "session_id"],
            msg: "Field required",
            input: body && "session_id" in body ? body : {},
          },
        ],
      });
    }
  });

  it("validates the body: reason enum, session_id UUID, JSON, object", async () => {
    const m = await mint(suite);
    const t = bearer(m.session_token);
    const bad = await json(await stop(t, { reason: "BORED" }));
    expect(bad.detail).toHaveLength(1);
    expect(bad.detail[0]).toMatchObject({ type: "enum", loc: ["body", "reason"], input: "BORED" });
    expect(bad.detail[0].ctx.expected).toContain("'USER_CLOSED'");
    const uuid = await json(await stop(t, { session_id: "abc" }));
    expect(uuid.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["body", "session_id"] });
    const notJson = await suite.request("POST", "/v1/sessions/stop", {
      headers: { ...t, "content-type": "application/json" },
      body: "{nope",
    });
    expect(notJson.status).toBe(422);
    expect((await json(notJson)).detail[0]).toMatchObject({ type: "json_invalid", loc: ["body", 1] });
    const list = await json(await stop(t, [1, 2]));
    expect(list.detail[0]).toMatchObject({ type: "model_attributes_type", loc: ["body"] });
    // Unknown keys are ignored.
    const ok = await stop(t, { reason: "USER_CLOSED", extra: { deep: true } });
    expect(ok.status).toBe(200);
  });
});

describe("POST /v1/sessions/keep-alive", () => {
  it("answers CREATED and STARTED sessions, by token or by API key with session_id", async () => {
    const created = await mint(suite);
    const res = await keepAlive(bearer(created.session_token));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("5");
    expect((await json(res)).data.status).toBe("CREATED");
    const running = await startedSession();
    const byKey = await keepAlive(apiKey(), { session_id: running.session_id });
    expect(byKey.status).toBe(200);
    expect((await json(byKey)).data.status).toBe("STARTED");
  });

  it("answers 409 for an ENDED session", async () => {
    const m = await endedSession();
    const res = await keepAlive(bearer(m.session_token));
    expect(res.status).toBe(409);
    expect((await keepAlive(apiKey(), { session_id: m.session_id })).status).toBe(409);
  });

  it("refuses another session's id with a token (404), a missing id with a key (422), bad ids (422)", async () => {
    const m = await mint(suite);
    const other = await mint(suite);
    expect((await keepAlive(bearer(m.session_token), { session_id: other.session_id })).status).toBe(404);
    expect((await keepAlive(apiKey())).status).toBe(422);
    const bad = await json(await keepAlive(apiKey(), { session_id: 5 }));
    expect(bad.detail[0]).toMatchObject({ loc: ["body", "session_id"], type: "uuid_type" });
    expect((await keepAlive(apiKey(), { session_id: crypto.randomUUID() })).status).toBe(404);
  });
});

describe("session reads by token and cookie", () => {
  it("lets the la_session cookie (or the bearer token) read its own session and transcript, nothing else", async () => {
    const m = await startedSession();
    const other = await mint(suite);
    for (const [creds, onBackendRoutes] of [
      [cookie(m.session_token), 401],
      [bearer(m.session_token), 403],
    ] as const) {
      const own = await suite.get(`/v1/sessions/${m.session_id}`, creds);
      expect(own.status).toBe(200);
      expect((await json(own)).data.id).toBe(m.session_id);
      expect((await suite.get(`/v1/sessions/${m.session_id}/transcript`, creds)).status).toBe(200);
      expect((await suite.get(`/v1/sessions/${other.session_id}`, creds)).status).toBe(404);
      expect((await suite.get(`/v1/sessions/${other.session_id}/transcript`, creds)).status).toBe(404);
      // The list and the credits are for backends: a cookie is no credential there, a token the wrong one.
      expect((await suite.get("/v1/sessions", creds)).status).toBe(onBackendRoutes);
      expect((await suite.get("/v1/users/credits", creds)).status).toBe(onBackendRoutes);
    }
    expect((await suite.get(`/v1/sessions/${m.session_id}`, cookie("forged"))).status).toBe(401);
  });

  it("refuses reads, transcript and events delete with the token of an ended session (401); the key still reads", async () => {
    const m = await endedSession();
    for (const creds of [cookie(m.session_token), bearer(m.session_token)]) {
      for (const [method, path] of [
        ["GET", `/v1/sessions/${m.session_id}`],
        ["GET", `/v1/sessions/${m.session_id}/transcript`],
        ["DELETE", `/v1/sessions/${m.session_id}/events`],
      ] as const) {
        const res = await suite.request(method, path, { headers: creds });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect((await json(res)).code).toBe(4010);
      }
    }
    const res = await suite.get(`/v1/sessions/${m.session_id}`, apiKey());
    expect((await json(res)).data).toMatchObject({ status: "ENDED", end_reason: "USER_CLOSED" });
  });

  it("starts with a session token minted from a different space only for that space's session", async () => {
    const other = await otherSpace(suite);
    const theirs = await mint(suite, { avatar_id: WAYNE }, other.apiKey);
    // The demo key cannot see or stop it.
    expect((await suite.get(`/v1/sessions/${theirs.session_id}`, apiKey())).status).toBe(404);
    expect((await stop(apiKey(), { session_id: theirs.session_id })).status).toBe(404);
    expect((await keepAlive(apiKey(), { session_id: theirs.session_id })).status).toBe(404);
    const mine = await mint(suite, { avatar_id: ADA });
    expect((await suite.get(`/v1/sessions/${mine.session_id}`, key(other.apiKey))).status).toBe(404);
  });
});
