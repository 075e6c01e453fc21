import { randomUUID } from "node:crypto";
import { SessionState } from "@avatar/contracts/sessions";
import { consumeEvent, topics } from "@avatar/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { startedLite } from "./realtime-support.js";
import { bearer, eventually, grant, key, mint, otherSpace, WAYNE } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * The timers of the sessions service over real HTTP, with its durations shortened through the
 * environment: 500 ms minutes, a 2 s idle timeout, a 1 s sandbox cap, a 4 s start deadline (and the
 * pipeline worker's heartbeat, which carries its sessions' client activity, every 200 ms). Every
 * assertion reads the timestamps the service recorded, so a slow machine changes nothing but the wait.
 */

let suite: TestSuite;
let space: { spaceId: string; apiKey: string };

beforeAll(async () => {
  suite = await startTestSuite({
    env: {
      SESSION_MINUTE_MS: "500",
      SESSIONS_TICK_MS: "50",
      SESSION_IDLE_TIMEOUT_MS: "2000",
      SESSION_SANDBOX_MAX_DURATION_MS: "1000",
      SESSION_START_TIMEOUT_MS: "4000",
      PIPELINE_HEARTBEAT_MS: "200",
    },
    overrides: { rateLimitStore: { increment: async () => 1 } },
  });
  space = await otherSpace(suite);
});
afterAll(async () => {
  await suite?.stop();
});

const mintHere = (body: Record<string, unknown> = {}, apiKey = space.apiKey) =>
  mint(suite, { avatar_id: WAYNE, ...body }, apiKey);
const post = (path: string, token: string) => suite.request("POST", path, { headers: bearer(token) });

/** The session entry once it has ended. */
function ended(sessionId: string, apiKey = space.apiKey) {
  return eventually(async () => {
    const entry = (await json(await suite.get(`/v1/sessions/${sessionId}`, key(apiKey)))).data;
    expect(entry.status).toBe("ENDED");
    return entry;
  });
}

async function chargedMinutes(spaceId: string, sessionId: string) {
  const res = await suite.clients.sessions.listLedgerEntries({ spaceId, sessionId });
  return res.entries
    .filter((e) => e.kind === "charge")
    .map((e) => e.minuteIndex)
    .sort((a, b) => a - b);
}

describe("timers", () => {
  it("ends a started session left alone with IDLE_TIMEOUT, charging each minute that began before", async () => {
    await grant(suite, "100", space.spaceId);
    const m = await mintHere({ mode: "LITE" });
    const start = await post("/v1/sessions/start", m.session_token);
    expect(start.status).toBe(201);
    const entry = await ended(m.session_id);
    expect(entry).toMatchObject({ end_reason: "IDLE_TIMEOUT", duration: 2, credits_consumed: 4 });
    expect(await chargedMinutes(space.spaceId, m.session_id)).toEqual([0, 1, 2, 3]);
    // The token of the ended session: stop answers it as it ended, start and keep-alive are refused.
    expect((await json(await post("/v1/sessions/stop", m.session_token))).data.end_reason).toBe(
      "IDLE_TIMEOUT",
    );
    expect((await post("/v1/sessions/start", m.session_token)).status).toBe(409);
    expect((await post("/v1/sessions/keep-alive", m.session_token)).status).toBe(409);
  });

  it("counts the idle timeout from the last keep-alive", async () => {
    await grant(suite, "100", space.spaceId);
    const m = await mintHere({ mode: "LITE" });
    await post("/v1/sessions/start", m.session_token);
    const alive = await post("/v1/sessions/keep-alive", m.session_token);
    expect(alive.status).toBe(200);
    const keptAt = Date.parse((await json(alive)).data.updated_at);
    const entry = await ended(m.session_id);
    expect(entry.end_reason).toBe("IDLE_TIMEOUT");
    expect(Date.parse(entry.end_at)).toBe(keptAt + 2000);
  });

  it("counts a client's messages as activity: the worker's heartbeats carry them to the idle timer", async () => {
    await grant(suite, "100", space.spaceId);
    const session = await startedLite(suite, { avatar_id: WAYNE }, space.apiKey);
    const client = await EventClient.connect(session.ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");
    // Talking for longer than the idle timeout keeps the session.
    let lastSent = 0;
    for (const until = Date.now() + 3_500; Date.now() < until; ) {
      client.send({ type: "agent.interrupt" });
      lastSent = Date.now();
      await new Promise((r) => setTimeout(r, 250));
    }
    const { session: running } = await suite.clients.sessions.getSession({
      spaceId: space.spaceId,
      sessionId: session.session_id,
    });
    expect(running?.state).toBe(SessionState.STARTED);
    // Silent from here on (the socket stays open): it ends 2 s after the last message counted.
    const entry = await ended(session.session_id);
    expect(entry.end_reason).toBe("IDLE_TIMEOUT");
    const after = Date.parse(entry.end_at) - 2_000 - lastSent;
    expect(after).toBeGreaterThanOrEqual(-300);
    expect(after).toBeLessThanOrEqual(300);
    await client.close();
  });

  it("ends with NO_CREDITS when the balance cannot pay the next minute, with an exact ledger", async () => {
    const poor = await otherSpace(suite);
    await grant(suite, "5", poor.spaceId);
    const m = await mintHere({}, poor.apiKey);
    expect((await post("/v1/sessions/start", m.session_token)).status).toBe(201);
    const entry = await ended(m.session_id, poor.apiKey);
    expect(entry).toMatchObject({ end_reason: "NO_CREDITS", credits_consumed: 4, duration: 1 });
    const ledger = await suite.clients.sessions.listLedgerEntries({ spaceId: poor.spaceId });
    expect(ledger.entries.map((e) => [e.kind, e.amount]).reverse()).toEqual([
      ["grant", "5"],
      ["escrow", "-2"],
      ["escrow_release", "2"],
      ["charge", "-2"],
      ["charge", "-2"],
    ]);
    expect((await json(await suite.get("/v1/users/credits", key(poor.apiKey)))).data.credits_left).toBe("1");
  });

  it("never charges a sandbox session and ends it at its cap with MAX_DURATION_REACHED", async () => {
    const broke = await otherSpace(suite);
    const m = await mintHere({ is_sandbox: true }, broke.apiKey);
    const start = await json(await post("/v1/sessions/start", m.session_token));
    expect(start.data.max_session_duration).toBe(1);
    const entry = await ended(m.session_id, broke.apiKey);
    expect(entry).toMatchObject({ end_reason: "MAX_DURATION_REACHED", duration: 1, credits_consumed: 0 });
    expect((await suite.clients.sessions.listLedgerEntries({ spaceId: broke.spaceId })).entries).toEqual([]);
  });

  it("reaps a session never started with ZOMBIE_SESSION_REAP and announces every end on the bus", async () => {
    const seen = new Map<string, string>();
    const sub = await consumeEvent(suite.bus, topics.sessionEnded, `test-${randomUUID()}`, (e) => {
      if (e.session) seen.set(e.session.id, String(e.session.endReason));
    });
    try {
      const m = await mintHere();
      const entry = await ended(m.session_id);
      expect(entry).toMatchObject({ end_reason: "ZOMBIE_SESSION_REAP", duration: 0, credits_consumed: 0 });
      expect(Date.parse(entry.end_at) - Date.parse(entry.created_at)).toBe(4000);
      expect((await post("/v1/sessions/start", m.session_token)).status).toBe(409);
      await eventually(async () => expect(seen.has(m.session_id)).toBe(true));
    } finally {
      await sub.unsubscribe();
    }
  });
});
