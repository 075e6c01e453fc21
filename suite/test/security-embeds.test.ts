import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { start, stopSession } from "./realtime-support.js";
import { ADA, grant, key, otherSpace, WAYNE } from "./sessions-support.js";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 4 of the security review (and the embed parts of finding 7): one IP minted ~630 sessions a
 * minute, any origin (even `null`) was reflected with credentials, failed starts left sessions behind,
 * and visitors read operator notes. Now each embed has limits its owner sets (with safe defaults),
 * allowed origins that also give the page's frame-ancestors, no session is created that cannot start,
 * the owner can disable an embed, and visitors get visitor words.
 */

let suite: TestSuite;
beforeAll(async () => {
  suite = await startTestSuite();
  await grant(suite, "100");
});
afterAll(async () => {
  await suite?.stop();
});
// The visitors' endpoint is limited per client IP (10/s), and every test here comes from one address.
beforeEach(atNextSecond);

const asOwner = (method: string, path: string, body?: unknown, apiKey = suite.apiKey) =>
  suite.request(method, path, { headers: key(apiKey), ...(body !== undefined ? { body } : {}) });

async function embed(body: Record<string, unknown>, apiKey = suite.apiKey) {
  const res = await asOwner("POST", "/v2/embeddings", { avatar_id: ADA, ...body }, apiKey);
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(200);
  return payload.data as { embed_id: string; url: string; [k: string]: unknown };
}

const visit = (embedId: string, headers: Record<string, string> = {}) =>
  suite.request("POST", `/embed/${embedId}/session`, { headers });

async function sessionsOf(embedId: string): Promise<number> {
  const res = await asOwner("GET", `/v1/sessions?embed_id=${embedId}&page_size=100`);
  return (await json(res)).data.count;
}

describe("an embed's limits", () => {
  it("has safe defaults, shown on creation and by GET, and refuses bad values with 422", async () => {
    const e = await embed({ is_sandbox: true });
    expect(e).toMatchObject({
      max_concurrent_sessions: 3,
      max_sessions_per_hour: 30,
      allowed_origins: [],
      is_disabled: false,
    });
    const got = await asOwner("GET", `/v2/embeddings/${e.embed_id}`);
    expect((await json(got)).data).toEqual(e);
    for (const [field, value, type] of [
      ["max_concurrent_sessions", 0, "greater_than_equal"],
      ["max_sessions_per_hour", 100_001, "less_than_equal"],
      ["allowed_origins", ["https://shop.example/page"], "value_error"],
      ["allowed_origins", ["null"], "value_error"],
    ] as const) {
      const res = await asOwner("POST", "/v2/embeddings", { avatar_id: ADA, [field]: value });
      expect(res.status, field).toBe(422);
      expect((await json(res)).detail[0].type).toBe(type);
    }
  });

  it("refuses a visitor beyond max_concurrent_sessions with 429 in visitor words, and creates nothing", async () => {
    const e = await embed({ is_sandbox: true, max_concurrent_sessions: 2 });
    expect((await visit(e.embed_id)).status).toBe(200);
    expect((await visit(e.embed_id)).status).toBe(200);
    const refused = await visit(e.embed_id);
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual({
      code: 4290,
      data: null,
      message: "The avatar is talking with other visitors right now. Please try again in a few minutes.",
      reason: "embed_busy",
      visitor_message:
        "The avatar is talking with other visitors right now. Please try again in a few minutes.",
    });
    expect(await sessionsOf(e.embed_id)).toBe(2);
  });

  it("refuses a visitor beyond max_sessions_per_hour", async () => {
    const e = await embed({ is_sandbox: true, max_sessions_per_hour: 2, max_concurrent_sessions: 10 });
    for (let i = 0; i < 2; i++) expect((await visit(e.embed_id)).status).toBe(200);
    const refused = await visit(e.embed_id);
    expect(refused.status).toBe(429);
    expect((await json(refused)).reason).toBe("embed_hourly_limit");
    expect(await sessionsOf(e.embed_id)).toBe(2);
  });

  it("creates no session the owner cannot pay a start for: 503 for the visitor, no row", async () => {
    const poor = await otherSpace(suite);
    const e = await embed({ avatar_id: WAYNE }, poor.apiKey);
    const res = await visit(e.embed_id);
    expect(res.status).toBe(503);
    const body = await json(res);
    expect(body).toMatchObject({ reason: "unavailable" });
    expect(JSON.stringify(body)).not.toMatch(/credit/i);
    const listed = await asOwner("GET", `/v1/sessions?embed_id=${e.embed_id}`, undefined, poor.apiKey);
    expect((await json(listed)).data.count).toBe(0);
  });

  it("can be disabled and enabled again by its owner (PATCH), and by nobody else", async () => {
    const e = await embed({ is_sandbox: true });
    // A visit first: the embed is then cached where visitors' tokens are minted, and disabling must reach it.
    expect((await visit(e.embed_id)).status).toBe(200);
    const patched = await asOwner("PATCH", `/v2/embeddings/${e.embed_id}`, { is_disabled: true });
    expect((await json(patched)).data.is_disabled).toBe(true);
    const refused = await visit(e.embed_id);
    expect(refused.status).toBe(403);
    expect((await json(refused)).reason).toBe("embed_disabled");
    const stranger = await otherSpace(suite);
    const theirs = await asOwner(
      "PATCH",
      `/v2/embeddings/${e.embed_id}`,
      { is_disabled: false },
      stranger.apiKey,
    );
    expect(theirs.status).toBe(404);
    expect((await asOwner("GET", `/v2/embeddings/${e.embed_id}`, undefined, stranger.apiKey)).status).toBe(
      404,
    );
    await asOwner("PATCH", `/v2/embeddings/${e.embed_id}`, { is_disabled: false });
    expect((await visit(e.embed_id)).status).toBe(200);
  });
});

describe("an embed's allowed origins", () => {
  it("by default: the embed's own page only; another origin or null is refused before any session exists", async () => {
    const e = await embed({ is_sandbox: true, max_concurrent_sessions: 10 });
    for (const origin of ["https://evil.example", "null"]) {
      const res = await visit(e.embed_id, { Origin: origin });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect((await json(res)).reason).toBe("origin_not_allowed");
    }
    expect(await sessionsOf(e.embed_id)).toBe(0);
    // The page itself: its own origin, as browsers say it.
    const own = await visit(e.embed_id, { Origin: new URL(suite.gatewayUrl).origin });
    expect(own.status).toBe(200);
    const fetchMeta = await visit(e.embed_id, {
      Origin: "http://other.host",
      "Sec-Fetch-Site": "same-origin",
    });
    expect(fetchMeta.status).toBe(200);
  });

  it("allowed origins may call it (reflected without credentials, preflight too); frame-ancestors lists them", async () => {
    const e = await embed({
      is_sandbox: true,
      allowed_origins: ["https://Shop.Example", "https://cdn.example:8443"],
    });
    expect(e.allowed_origins).toEqual(["https://shop.example", "https://cdn.example:8443"]);
    const res = await visit(e.embed_id, { Origin: "https://shop.example" });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    const preflight = await suite.request("OPTIONS", `/embed/${e.embed_id}/session`, {
      headers: { Origin: "https://cdn.example:8443", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://cdn.example:8443");
    const foreign = await suite.request("OPTIONS", `/embed/${e.embed_id}/session`, {
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    const page = await fetch(e.url);
    expect(page.headers.get("content-security-policy")).toContain(
      "frame-ancestors 'self' https://shop.example https://cdn.example:8443",
    );
  });

  it("an owner's change of the allowed origins reaches the next visit and the page at once", async () => {
    const e = await embed({ is_sandbox: true, allowed_origins: ["https://shop.example"] });
    // Read once before the change: the gateway and the tokens service now hold the embed.
    expect((await visit(e.embed_id, { Origin: "https://shop.example" })).status).toBe(200);
    expect((await fetch(e.url)).headers.get("content-security-policy")).toContain("https://shop.example");
    const patched = await asOwner("PATCH", `/v2/embeddings/${e.embed_id}`, {
      allowed_origins: ["https://other.example"],
    });
    expect((await json(patched)).data.allowed_origins).toEqual(["https://other.example"]);
    const refused = await visit(e.embed_id, { Origin: "https://shop.example" });
    expect(refused.status).toBe(403);
    expect((await json(refused)).reason).toBe("origin_not_allowed");
    expect((await visit(e.embed_id, { Origin: "https://other.example" })).status).toBe(200);
    const csp = (await fetch(e.url)).headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'self' https://other.example");
    expect(csp).not.toContain("https://shop.example");
  });

  it("* lets any origin in, never null", async () => {
    const e = await embed({ is_sandbox: true, allowed_origins: ["*"] });
    expect((await visit(e.embed_id, { Origin: "https://anyone.example" })).status).toBe(200);
    expect((await visit(e.embed_id, { Origin: "null" })).status).toBe(403);
    expect((await fetch(e.url)).headers.get("content-security-policy")).toContain("frame-ancestors *");
  });

  it("the session-token routes echo any real origin with credentials, never null", async () => {
    const res = await suite.request("OPTIONS", "/v1/sessions/start", {
      headers: { Origin: "null", "Access-Control-Request-Method": "POST" },
    });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const real = await suite.request("OPTIONS", "/v1/sessions/start", {
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST" },
    });
    expect(real.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(real.headers.get("access-control-allow-credentials")).toBe("true");
  });
});

describe("the embed page's headers", () => {
  it("limit connections to this service, frames to the allowed origins, and sniffing and referrers", async () => {
    const e = await embed({ is_sandbox: true });
    const res = await fetch(e.url);
    const csp = res.headers.get("content-security-policy") ?? "";
    const origin = new URL(suite.gatewayUrl);
    expect(csp).toContain(`connect-src 'self' ${origin.origin} ws://${origin.host}`);
    expect(csp).not.toMatch(/connect-src[^;]*(ws: |wss: |ws:;|wss:;)/);
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("img-src 'self'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });
});

describe("what a visitor reads", () => {
  it("errors of the session endpoint are in visitor words, never a service's own", async () => {
    const e = await embed({ is_sandbox: true });
    const patch = (is_deactivated: boolean) => asOwner("PATCH", `/v1/avatars/${ADA}`, { is_deactivated });
    expect((await patch(true)).status).toBe(200);
    try {
      const res = await visit(e.embed_id);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({
        code: 4000,
        reason: "unavailable",
        message: "This conversation cannot start right now. Please try again later.",
      });
    } finally {
      await patch(false);
    }
    const unknown = await visit("00000000-0000-4000-8000-000000000000");
    expect(await json(unknown)).toMatchObject({ code: 4040, reason: "embed_not_found" });
  });

  it("a visitor's start that fails is told in visitor words too (credits spent between mint and start)", async () => {
    const owner = await otherSpace(suite);
    await grant(suite, "2", owner.spaceId);
    const e = await embed({ avatar_id: WAYNE, max_concurrent_sessions: 5 }, owner.apiKey);
    const first = (await json(await visit(e.embed_id))).data;
    const second = (await json(await visit(e.embed_id))).data;
    const startAs = (token: string) =>
      suite.request("POST", "/v1/sessions/start", { headers: { Authorization: `Bearer ${token}` } });
    expect((await startAs(first.session_token)).status).toBe(201);
    const res = await startAs(second.session_token);
    expect(res.status).toBe(503);
    const body = await json(res);
    expect(body).toMatchObject({ reason: "unavailable", visitor_message: expect.any(String) });
    expect(JSON.stringify(body)).not.toMatch(/credit/i);
    await stopSession(suite, first.session_token);
  });

  it("notices on the event socket of an embed's session carry no operator note", async () => {
    const e = await embed({ max_concurrent_sessions: 5 });
    const minted = await json(await visit(e.embed_id));
    const { ws_url } = await start(suite, minted.data.session_token);
    const client = await EventClient.connect(ws_url);
    await client.next("session.state_updated", (ev) => ev.state === "connected");
    client.send({ type: "avatar.repeat", event_id: "r1", text: "Hello there." });
    client.send({ type: "avatar.say", event_id: "s1", text: "Hello?" });
    await client.next("error", (ev) => ev.source_event_id === "s1", 20_000);
    await stopSession(suite, minted.data.session_token);
    const notices = client
      .all("warning")
      .map((w) => w.warning)
      .concat(client.all("error").map((x) => x.error));
    expect(notices.length).toBeGreaterThan(0);
    for (const n of notices) {
      expect(n.message).not.toMatch(/configured|vendor|provider|model|key/i);
    }
  });
});
