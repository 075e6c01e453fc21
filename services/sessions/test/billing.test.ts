import { randomUUID } from "node:crypto";
import { SessionMode } from "@avatar/contracts/common";
import { SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { consumeEvent, topics } from "@avatar/runtime";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chargeMinute } from "../src/ledger.js";
import {
  config,
  defined,
  eventually,
  type Harness,
  harness,
  ledgerOf,
  MINUTE,
  ms,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/** Timers and charges on a hand-moved clock: every step is exact. */

let t: SessionsTestDb;
let h: Harness;

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db);
});
afterAll(async () => {
  await t?.close();
});

async function space(credits: string) {
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount: credits });
  return spaceId;
}

async function startedSession(spaceId: string, overrides: Parameters<typeof newSession>[1] = {}) {
  const s = await newSession(h.client, { spaceId, ...overrides });
  await h.client.startSession({ spaceId, sessionId: s.id });
  return s;
}

const session = async (spaceId: string, id: string) =>
  defined((await h.client.getSession({ spaceId, sessionId: id })).session);

/** Moves the clock in steps, running the scheduler after each, as the loop would. */
async function run(ms: number, step = 10_000) {
  for (let left = ms; left > 0; left -= step) {
    h.clock.advance(Math.min(step, left));
    await h.app.scheduler.runOnce();
  }
}

describe("per-minute charges", () => {
  it("charges minute k when it begins, at the mode's rate, while the session runs", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId);
    await run(MINUTE - 10_000);
    expect((await session(spaceId, s.id)).creditsConsumed).toBe(2);
    await run(10_000 + 1);
    expect((await session(spaceId, s.id)).creditsConsumed).toBe(4);
    await h.client.keepAliveSession({ spaceId, sessionId: s.id });
    await run(2 * MINUTE);
    const done = await h.client.stopSession({ spaceId, sessionId: s.id });
    expect(done.session).toMatchObject({ creditsConsumed: 8, duration: 180 });
    expect((await ledgerOf(t.db, spaceId, s.id)).filter(([k]) => k === "charge")).toEqual([
      ["charge", -2, 0],
      ["charge", -2, 1],
      ["charge", -2, 2],
      ["charge", -2, 3],
    ]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("92");
  });

  it("does not charge a minute that begins at the instant the session stops", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId, { config: config({ mode: SessionMode.LITE }) });
    h.clock.advance(MINUTE);
    const done = await h.client.stopSession({ spaceId, sessionId: s.id });
    expect(done.session?.creditsConsumed).toBe(1);
  });

  it("ends with NO_CREDITS at the minute the balance cannot pay, with an exact ledger", async () => {
    const spaceId = await space("7");
    const s = await startedSession(spaceId);
    await run(5 * MINUTE);
    const ended = await session(spaceId, s.id);
    expect(ended).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.NO_CREDITS,
      creditsConsumed: 6,
      duration: 180,
    });
    expect(await ledgerOf(t.db, spaceId)).toEqual([
      ["grant", 7, null],
      ["escrow", -2, null],
      ["escrow_release", 2, null],
      ["charge", -2, 0],
      ["charge", -2, 1],
      ["charge", -2, 2],
    ]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("1");
  });

  it("shares one balance between sessions of a space: whichever minute cannot be paid ends its session", async () => {
    const spaceId = await space("6");
    const a = await startedSession(spaceId);
    const b = await startedSession(spaceId);
    await run(3 * MINUTE);
    const [sa, sb] = [await session(spaceId, a.id), await session(spaceId, b.id)];
    expect([sa.endReason, sb.endReason]).toContain(SessionEndReason.NO_CREDITS);
    expect(sa.creditsConsumed + sb.creditsConsumed).toBe(6);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("0");
  });

  it("never charges a sandbox session and ends it after 60 s with MAX_DURATION_REACHED", async () => {
    const spaceId = randomUUID();
    const s = await startedSession(spaceId, { config: config({ isSandbox: true }), maxSessionDuration: 600 });
    await run(59_000, 1_000);
    expect((await session(spaceId, s.id)).state).toBe(SessionState.STARTED);
    await run(1_000, 1_000);
    const ended = await session(spaceId, s.id);
    expect(ended).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.MAX_DURATION_REACHED,
      duration: 60,
      creditsConsumed: 0,
    });
    expect(await ledgerOf(t.db, spaceId)).toEqual([]);
  });

  it("ends at the session's max duration, not charging the minute that would begin then", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId, { maxSessionDuration: 150 });
    await h.client.keepAliveSession({ spaceId, sessionId: s.id });
    await run(3 * MINUTE);
    expect(await session(spaceId, s.id)).toMatchObject({
      endReason: SessionEndReason.MAX_DURATION_REACHED,
      duration: 150,
      creditsConsumed: 6,
    });
    const exact = await startedSession(spaceId, { maxSessionDuration: 120 });
    await run(3 * MINUTE);
    expect(await session(spaceId, exact.id)).toMatchObject({ duration: 120, creditsConsumed: 4 });
  });
});

describe("idle timeout and reaping", () => {
  it("ends a started session left alone with IDLE_TIMEOUT, five minutes after the last activity", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId);
    await run(3 * MINUTE);
    await h.client.keepAliveSession({ spaceId, sessionId: s.id });
    await run(5 * MINUTE - 10_000);
    expect((await session(spaceId, s.id)).state).toBe(SessionState.STARTED);
    await run(10_000);
    const ended = await session(spaceId, s.id);
    expect(ended).toMatchObject({
      endReason: SessionEndReason.IDLE_TIMEOUT,
      duration: 480,
      creditsConsumed: 16,
    });
    expect(ms(ended.endedAt) - ms(ended.startedAt)).toBe(8 * MINUTE);
  });

  it("reaps a session never started within 10 minutes with ZOMBIE_SESSION_REAP", async () => {
    const spaceId = await space("100");
    const s = await newSession(h.client, { spaceId });
    await run(10 * MINUTE - 10_000);
    expect((await session(spaceId, s.id)).state).toBe(SessionState.CREATED);
    await run(10_000);
    expect(await session(spaceId, s.id)).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.ZOMBIE_SESSION_REAP,
      duration: 0,
      creditsConsumed: 0,
    });
  });

  it("takes its durations from the environment", async () => {
    const short = harness(t.db, {
      clock: h.clock,
      env: {
        SESSION_IDLE_TIMEOUT_MS: "2000",
        SESSION_START_TIMEOUT_MS: "3000",
        SESSION_MINUTE_MS: "1000",
        SESSION_SANDBOX_MAX_DURATION_MS: "1500",
      },
    });
    const spaceId = await space("100");
    const a = await newSession(short.client, { spaceId, config: config({ mode: SessionMode.LITE }) });
    await short.client.startSession({ spaceId, sessionId: a.id });
    const zombie = await newSession(short.client, { spaceId });
    const sandbox = await newSession(short.client, { spaceId, config: config({ isSandbox: true }) });
    expect(sandbox.maxSessionDuration).toBe(2);
    await short.client.startSession({ spaceId, sessionId: sandbox.id });
    h.clock.advance(3_000);
    await short.app.scheduler.runOnce();
    expect(await session(spaceId, a.id)).toMatchObject({
      endReason: SessionEndReason.IDLE_TIMEOUT,
      duration: 2,
      creditsConsumed: 2,
    });
    expect((await session(spaceId, zombie.id)).endReason).toBe(SessionEndReason.ZOMBIE_SESSION_REAP);
    expect((await session(spaceId, sandbox.id)).endReason).toBe(SessionEndReason.MAX_DURATION_REACHED);
  });
});

describe("durability", () => {
  it("catches up after a pause of the scheduler: the minutes that began are charged, the deadline ends it", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId);
    // Nothing runs for 7 minutes (the service was down), then one round.
    h.clock.advance(7 * MINUTE);
    await h.app.scheduler.runOnce();
    const ended = await session(spaceId, s.id);
    expect(ended).toMatchObject({
      endReason: SessionEndReason.IDLE_TIMEOUT,
      duration: 300,
      creditsConsumed: 10,
    });
    expect((await ledgerOf(t.db, spaceId, s.id)).filter(([k]) => k === "charge").map(([, , m]) => m)).toEqual(
      [0, 1, 2, 3, 4],
    );
  });

  it("announces the end on the bus once, with the session id as message id", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId);
    const seen: string[] = [];
    const sub = await consumeEvent(h.bus, topics.sessionEnded, `test-${randomUUID()}`, (e) => {
      if (e.session?.id === s.id) seen.push(SessionEndReason[e.session.endReason]);
    });
    await h.client.stopSession({ spaceId, sessionId: s.id });
    await h.client.stopSession({ spaceId, sessionId: s.id });
    await h.app.scheduler.runOnce();
    await eventually(async () => expect(seen).toEqual(["USER_CLOSED"]));
    expect(await t.db.selectFrom("outbox").select("id").execute()).toEqual([]);
    await sub.unsubscribe();
  });
});

describe("the lifecycle's events", () => {
  it("carry the session as its start and its stop left it (written by the same statement as the change)", async () => {
    const spaceId = await space("100");
    const s = await newSession(h.client, { spaceId });
    // Two consumers, each delivering on its own (a new one first works through the events before it), so
    // the two events may arrive in either order: each is kept under its kind.
    const events = new Map<string, unknown[]>();
    const keep = (type: string, session: unknown) => events.set(type, [...(events.get(type) ?? []), session]);
    const subs = [
      await consumeEvent(h.bus, topics.sessionStarted, `test-${randomUUID()}`, (e) => {
        if (e.session?.id === s.id) keep("started", e.session);
      }),
      await consumeEvent(h.bus, topics.sessionEnded, `test-${randomUUID()}`, (e) => {
        if (e.session?.id === s.id) keep("ended", e.session);
      }),
    ];
    const start = await h.client.startSession({ spaceId, sessionId: s.id });
    h.clock.advance(30_000);
    const stop = await h.client.stopSession({ spaceId, sessionId: s.id });
    // Well inside the test's own time limit, so that a miss says what arrived.
    await eventually(async () => expect([...events.keys()].sort()).toEqual(["ended", "started"]), 10_000);
    expect(events.get("started")).toEqual([start.session]);
    expect(events.get("ended")).toEqual([stop.session]);
    expect(stop.session).toMatchObject({ state: SessionState.ENDED, duration: 30 });
    for (const sub of subs) await sub.unsubscribe();
  });
});

describe("two schedulers on one database", () => {
  it("split the due sessions between them: each session is settled once and every minute charged once", async () => {
    const other = harness(t.db, { clock: h.clock });
    const spaceId = await space("1000");
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await startedSession(spaceId)).id);
    h.clock.advance(7 * MINUTE);
    const [mine, theirs] = await Promise.all([h.app.scheduler.runOnce(), other.app.scheduler.runOnce()]);
    expect(mine + theirs).toBe(20);
    for (const id of ids) {
      const charges = (await ledgerOf(t.db, spaceId, id)).filter(([k]) => k === "charge");
      expect(charges.map(([, , m]) => m)).toEqual([0, 1, 2, 3, 4]);
      expect((await session(spaceId, id)).endReason).toBe(SessionEndReason.IDLE_TIMEOUT);
    }
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe(String(1000 - 20 * 10));
  });
});

describe("the ledger in the database", () => {
  it("refuses a second charge of one session-minute, whoever writes it", async () => {
    const spaceId = await space("100");
    const s = await startedSession(spaceId);
    const again = await t.db
      .transaction()
      .execute((trx) =>
        chargeMinute(trx, { spaceId, sessionId: s.id, amount: 2, minuteIndex: 0, at: h.clock.now() }),
      );
    expect(again).toBe("already_charged");
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("98");
    const raw = t.db
      .insertInto("ledger")
      .values({
        space_id: spaceId,
        kind: "charge",
        amount: -2,
        session_id: s.id,
        minute_index: 0,
        idempotency_key: null,
        created_at: new Date(),
      })
      .execute();
    await expect(raw).rejects.toMatchObject({ code: "23505" });
  });

  it("is append-only and keeps balances from going negative", async () => {
    const spaceId = await space("5");
    await expect(
      sql`update ledger set amount = 1000 where space_id = ${spaceId}`.execute(t.db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`delete from ledger where space_id = ${spaceId}`.execute(t.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(
      sql`update credit_accounts set balance = -1 where space_id = ${spaceId}`.execute(t.db),
    ).rejects.toMatchObject({ code: "23514" });
  });

  it("keeps every balance equal to the sum of its ledger", async () => {
    const rows = await sql<{ space_id: string; balance: string; total: string }>`
      select a.space_id, a.balance, coalesce(sum(l.amount), 0) as total
      from credit_accounts a left join ledger l on l.space_id = a.space_id
      group by a.space_id, a.balance`.execute(t.db);
    expect(rows.rows.length).toBeGreaterThan(5);
    for (const r of rows.rows) expect(Number(r.balance)).toBe(Number(r.total));
  });
});
