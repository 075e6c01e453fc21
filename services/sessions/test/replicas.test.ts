import { randomUUID } from "node:crypto";
import { createMemoryBus } from "@avatar/bus";
import { SessionEndReason, SessionState, SessionsService } from "@avatar/contracts/sessions";
import { createClients, listen, type RunningService, silentLogger, startService } from "@avatar/runtime";
import { allowedCallerClient, createTestDatabase, type TestDatabase, testIdentity } from "@avatar/testkit";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sessionsModule } from "../src/index.js";
import { defined, eventually, ms, newSession, noPipeline } from "./support.js";

/**
 * Real servers on real ports and a real clock, billing shortened to 300 ms minutes: two replicas on one
 * database, and a service stopped and started again in the middle of sessions.
 */

const MINUTE_MS = 300;
let database: TestDatabase;
const running: RunningService[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});
afterAll(async () => {
  await database?.drop();
});

async function replica(env: Record<string, string> = {}) {
  const listening = await listen({ port: 0, host: "127.0.0.1" });
  const service = await startService(sessionsModule, {
    databaseUrl: database.url,
    bus: createMemoryBus(),
    log: silentLogger,
    clients: createClients({}, testIdentity("sessions")),
    env: { ...noPipeline, SESSION_MINUTE_MS: String(MINUTE_MS), SESSIONS_TICK_MS: "40", ...env },
    listening,
    identity: testIdentity("sessions"),
    poolSize: 4,
  });
  running.push(service);
  return { service, client: allowedCallerClient(SessionsService, listening.url) };
}

/** A session's charged minutes, from the ledger. */
async function chargedMinutes(client: Client<typeof SessionsService>, spaceId: string, sessionId: string) {
  const res = await client.listLedgerEntries({ spaceId, sessionId, page: { pageSize: 100 } });
  return res.entries
    .filter((e) => e.kind === "charge")
    .map((e) => e.minuteIndex)
    .sort((a, b) => a - b);
}

/** Minutes k with start + k*minute strictly before the end: the ones a session must have paid. */
function expectedMinutes(session: {
  startedAt?: Parameters<typeof timestampDate>[0];
  endedAt?: Parameters<typeof timestampDate>[0];
}) {
  if (!session.startedAt || !session.endedAt) throw new Error("session has not ended");
  const ms = timestampDate(session.endedAt).getTime() - timestampDate(session.startedAt).getTime();
  return Array.from({ length: Math.max(1, Math.ceil(ms / MINUTE_MS)) }, (_, k) => k);
}

describe("two replicas on one database", () => {
  it("charge every minute of every session exactly once", { timeout: 90_000 }, async () => {
    const a = await replica();
    const b = await replica();
    const spaceId = randomUUID();
    await a.client.grantCredits({ spaceId, amount: "100000" });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const client = i % 2 === 0 ? a.client : b.client;
      const s = await newSession(client, { spaceId });
      await client.startSession({ spaceId, sessionId: s.id });
      ids.push(s.id);
    }
    // Let both loops work through several minutes of every session.
    await eventually(async () => {
      for (const id of ids)
        expect((await chargedMinutes(a.client, spaceId, id)).length).toBeGreaterThanOrEqual(6);
    }, 60_000);
    let total = 0;
    for (const [i, id] of ids.entries()) {
      const client = i % 2 === 0 ? b.client : a.client;
      const { session } = await client.stopSession({ spaceId, sessionId: id });
      const minutes = await chargedMinutes(a.client, spaceId, id);
      expect(minutes).toEqual(expectedMinutes(defined(session)));
      expect(session?.creditsConsumed).toBe(2 * minutes.length);
      total += 2 * minutes.length;
    }
    expect((await b.client.getCredits({ spaceId })).creditsLeft).toBe(String(100000 - total));
  });
});

describe("a service restarted mid-session", () => {
  it("neither skips nor doubles a charge across the restart", { timeout: 90_000 }, async () => {
    const first = await replica();
    const spaceId = randomUUID();
    await first.client.grantCredits({ spaceId, amount: "100000" });
    const s = await newSession(first.client, { spaceId });
    await first.client.startSession({ spaceId, sessionId: s.id });
    await eventually(async () =>
      expect((await chargedMinutes(first.client, spaceId, s.id)).length).toBeGreaterThanOrEqual(2),
    );
    await first.service.stop();
    running.splice(running.indexOf(first.service), 1);
    const downAt = Date.now();
    // Down for several minutes (of 300 ms).
    await new Promise((r) => setTimeout(r, 4 * MINUTE_MS));

    const second = await replica();
    await eventually(async () => {
      const minutes = await chargedMinutes(second.client, spaceId, s.id);
      expect(minutes.length).toBeGreaterThan(Math.floor((Date.now() - downAt) / MINUTE_MS));
    }, 60_000);
    const { session } = await second.client.stopSession({ spaceId, sessionId: s.id });
    const minutes = await chargedMinutes(second.client, spaceId, s.id);
    expect(minutes).toEqual(expectedMinutes(defined(session)));
    expect(session?.creditsConsumed).toBe(2 * minutes.length);
  });

  it("keeps the idle timer: a session left alone while the service is down ends at its idle deadline", {
    timeout: 90_000,
  }, async () => {
    const env = { SESSION_IDLE_TIMEOUT_MS: "1000" };
    const first = await replica(env);
    const spaceId = randomUUID();
    await first.client.grantCredits({ spaceId, amount: "100000" });
    const s = await newSession(first.client, { spaceId });
    const started = defined((await first.client.startSession({ spaceId, sessionId: s.id })).session);
    await first.service.stop();
    running.splice(running.indexOf(first.service), 1);
    await new Promise((r) => setTimeout(r, 1500));

    const second = await replica(env);
    const ended = await eventually(async () => {
      const { session } = await second.client.getSession({ spaceId, sessionId: s.id });
      expect(session?.state).toBe(SessionState.ENDED);
      return defined(session);
    });
    expect(ended.endReason).toBe(SessionEndReason.IDLE_TIMEOUT);
    expect(ms(ended.endedAt)).toBe(ms(started.lastActivityAt) + 1000);
    expect(await chargedMinutes(second.client, spaceId, s.id)).toEqual(expectedMinutes(ended));
  });
});
