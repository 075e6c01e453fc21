import { randomUUID } from "node:crypto";
import { SessionMode } from "@avatar/contracts/common";
import { ConnectionState, SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { errorDetailOf } from "@avatar/runtime";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { holdEscrow } from "../src/ledger.js";
import {
  config,
  defined,
  failure,
  type Harness,
  harness,
  ledgerOf,
  MINUTE,
  ms,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/** The lifecycle through SessionsService: every state x operation, credits at start, tickets. */

let t: SessionsTestDb;
let h: Harness;

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db);
});
afterAll(async () => {
  await t?.close();
});

/** A fresh space with `credits` granted. */
async function space(credits = "100") {
  const spaceId = randomUUID();
  if (credits !== "0") await h.client.grantCredits({ spaceId, amount: credits, note: "test" });
  return spaceId;
}

async function started(spaceId: string, overrides: Parameters<typeof newSession>[1] = {}) {
  const s = await newSession(h.client, { spaceId, ...overrides });
  await h.client.startSession({ spaceId, sessionId: s.id });
  return s;
}

async function ended(spaceId: string) {
  const s = await newSession(h.client, { spaceId });
  await h.client.stopSession({ spaceId, sessionId: s.id });
  return s;
}

describe("create", () => {
  it("stores a CREATED session with its configuration, rate and start deadline", async () => {
    const spaceId = await space("0");
    const s = await newSession(h.client, {
      spaceId,
      config: config({ mode: SessionMode.LITE, language: "fr" }),
      maxSessionDuration: 900,
    });
    expect(s).toMatchObject({
      spaceId,
      state: SessionState.CREATED,
      mode: SessionMode.LITE,
      maxSessionDuration: 900,
      duration: 0,
      creditsConsumed: 0,
    });
    const cfg = await h.client.getSessionConfig({ sessionId: s.id });
    expect(cfg.config?.language).toBe("fr");
    const row = await t.db
      .selectFrom("sessions")
      .selectAll()
      .where("id", "=", s.id)
      .executeTakeFirstOrThrow();
    expect(row.credit_rate).toBe(1);
    expect(row.start_deadline_at?.getTime()).toBe(h.clock.now().getTime() + 10 * MINUTE);
  });

  it("records the new session in its history and puts nothing on the bus", async () => {
    const spaceId = await space("0");
    const s = await newSession(h.client, {
      spaceId,
      config: config({ mode: SessionMode.LITE, isSandbox: true, contextId: randomUUID() }),
    });
    const events = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(events.events.map((e) => e.type)).toEqual(["session.created"]);
    const announced = await t.db
      .selectFrom("outbox")
      .select("subject")
      .where("msg_id", "like", `${s.id}.%`)
      .execute();
    expect(announced).toEqual([]);
  });

  it("caps a sandbox session at 60 s whatever it asked for and never charges it", async () => {
    const s = await newSession(h.client, { config: config({ isSandbox: true }), maxSessionDuration: 3600 });
    expect(s.maxSessionDuration).toBe(60);
    expect(s.isSandbox).toBe(true);
  });

  it("answers a retried create with the same session, and refuses the id in another space", async () => {
    const spaceId = await space("0");
    const id = randomUUID();
    const req = { sessionId: id, spaceId, config: config(), maxSessionDuration: 60 };
    const [a, ...others] = await Promise.all(Array.from({ length: 5 }, () => h.client.createSession(req)));
    for (const b of others) expect(b.session?.createdAt).toEqual(a?.session?.createdAt);
    const events = await h.client.listSessionEvents({ spaceId, sessionId: id });
    expect(events.events.map((e) => e.type)).toEqual(["session.created"]);
    const err = await failure(h.client.createSession({ ...req, spaceId: randomUUID() }));
    expect(err.code).toBe(Code.AlreadyExists);
  });

  it("refuses bad input, naming the field", async () => {
    const spaceId = await space("0");
    const cases: [Parameters<typeof h.client.createSession>[0], string][] = [
      [{ spaceId: "nope", config: config(), maxSessionDuration: 60 }, "space_id"],
      [{ spaceId, maxSessionDuration: 60 }, "config"],
      [{ spaceId, config: config({ mode: SessionMode.UNSPECIFIED }), maxSessionDuration: 60 }, "config.mode"],
      [{ spaceId, config: config({ avatarId: "" }), maxSessionDuration: 60 }, "config.avatar_id"],
      [{ spaceId, config: config({ contextId: "x" }), maxSessionDuration: 60 }, "config.context_id"],
      [{ spaceId, config: config(), maxSessionDuration: 0 }, "max_session_duration"],
      [{ spaceId, config: config(), maxSessionDuration: -5 }, "max_session_duration"],
      [{ spaceId, sessionId: "123", config: config(), maxSessionDuration: 60 }, "session_id"],
    ];
    for (const [req, field] of cases) {
      const err = await failure(h.client.createSession(req));
      expect(err.code, field).toBe(Code.InvalidArgument);
      expect(errorDetailOf(err)?.field).toBe(field);
    }
  });
});

describe("start", () => {
  it("holds one minute in escrow and turns it into the charge of minute 0", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(res.session).toMatchObject({ state: SessionState.STARTED, creditsConsumed: 2 });
    expect(res.connectTicket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ms(res.connectTicketExpiresAt)).toBe(h.clock.now().getTime() + 60_000);
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
      ["charge", -2, 0],
    ]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("8");
  });

  it("is idempotent: a second start answers the same session with a fresh ticket and charges nothing", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    const first = await h.client.startSession({ spaceId, sessionId: s.id });
    h.clock.advance(5_000);
    const second = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(second.session?.startedAt).toEqual(first.session?.startedAt);
    expect(second.connectTicket).not.toBe(first.connectTicket);
    expect((await ledgerOf(t.db, spaceId, s.id)).filter(([k]) => k === "charge")).toHaveLength(1);
  });

  it("makes one transition out of concurrent starts, each answered with its own ticket", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h.client.startSession({ spaceId, sessionId: s.id })),
    );
    expect(new Set(answers.map((a) => a.connectTicket)).size).toBe(8);
    expect(new Set(answers.map((a) => a.session?.state))).toEqual(new Set([SessionState.STARTED]));
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
      ["charge", -2, 0],
    ]);
    const events = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(events.events.map((e) => e.type)).toEqual(["session.created", "session.started"]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("8");
  });

  it("answers 402 (ResourceExhausted) when the balance cannot pay a minute at the mode's rate", async () => {
    const full = await space("1.5");
    const s = await newSession(h.client, { spaceId: full });
    const err = await failure(h.client.startSession({ spaceId: full, sessionId: s.id }));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect((await h.client.getSession({ spaceId: full, sessionId: s.id })).session?.state).toBe(
      SessionState.CREATED,
    );
    expect(await ledgerOf(t.db, full)).toEqual([["grant", 1.5, null]]);
    // Nothing of the refused hold stays: no escrow recorded on the session, the balance untouched.
    const row = await t.db
      .selectFrom("sessions")
      .select("escrow_amount")
      .where("id", "=", s.id)
      .executeTakeFirstOrThrow();
    expect(row.escrow_amount).toBe(0);
    expect((await h.client.getCredits({ spaceId: full })).creditsLeft).toBe("1.5");
    // LITE costs 1 a minute: the same balance pays for it.
    const lite = await newSession(h.client, { spaceId: full, config: config({ mode: SessionMode.LITE }) });
    await h.client.startSession({ spaceId: full, sessionId: lite.id });
    expect((await h.client.getCredits({ spaceId: full })).creditsLeft).toBe("0.5");
  });

  it("charges embed sessions at 2 a minute even in LITE mode", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, {
      spaceId,
      config: config({ mode: SessionMode.LITE, embedId: randomUUID() }),
    });
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(res.session?.creditsConsumed).toBe(2);
  });

  it("starts a sandbox session without credits", async () => {
    const spaceId = await space("0");
    const s = await newSession(h.client, { spaceId, config: config({ isSandbox: true }) });
    const res = await h.client.startSession({ spaceId, sessionId: s.id });
    expect(res.session?.state).toBe(SessionState.STARTED);
    expect(await ledgerOf(t.db, spaceId)).toEqual([]);
  });

  it("releases the escrow when the start fails between its two steps", async () => {
    const failing = harness(t.db, {
      clock: h.clock,
      beforeStartCompletes: async () => {
        throw new Error("no pipeline worker");
      },
    });
    const spaceId = await space("10");
    const s = await newSession(failing.client, { spaceId });
    const err = await failure(failing.client.startSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.Internal);
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
    ]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("10");
    // The session is still startable.
    await h.client.startSession({ spaceId, sessionId: s.id });
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("8");
  });

  it("gives back an escrow left behind when the session ends before its start completes", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    // What the first step of a start leaves when its process dies before the second step.
    await t.db.transaction().execute(async (trx) => {
      await holdEscrow(trx, { spaceId, sessionId: s.id, amount: 2, at: h.clock.now() }, { escrow_amount: 2 });
    });
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("8");
    await h.client.stopSession({ spaceId, sessionId: s.id });
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("10");
  });

  it("does not start a session stopped between its two steps (the second step sees the change)", async () => {
    let stopping: Promise<unknown> | undefined;
    const racing = harness(t.db, {
      clock: h.clock,
      // The user stops the session while its worker is being found.
      beforeStartCompletes: async (row) => {
        stopping = h.client.stopSession({ spaceId: row.space_id, sessionId: row.id });
        await stopping;
        return {};
      },
    });
    const spaceId = await space("10");
    const s = await newSession(racing.client, { spaceId });
    const err = await failure(racing.client.startSession({ spaceId, sessionId: s.id }));
    expect(errorDetailOf(err)?.reason).toBe("SESSION_ENDED");
    expect((await h.client.getSession({ spaceId, sessionId: s.id })).session?.state).toBe(SessionState.ENDED);
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
    ]);
    const events = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(events.events.map((e) => e.type)).toEqual(["session.created", "session.ended"]);
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("10");
  });

  it("refuses an ended session with 409 (FailedPrecondition)", async () => {
    const spaceId = await space();
    const s = await ended(spaceId);
    const err = await failure(h.client.startSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(errorDetailOf(err)?.reason).toBe("SESSION_ENDED");
  });

  it("refuses a session past its start deadline: it is reaped on the spot", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    h.clock.advance(10 * MINUTE);
    const err = await failure(h.client.startSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.FailedPrecondition);
    const after = (await h.client.getSession({ spaceId, sessionId: s.id })).session;
    expect(after).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.ZOMBIE_SESSION_REAP,
    });
  });

  it("reports another space's session and unknown ids as NotFound", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    for (const [space, id] of [
      [randomUUID(), s.id],
      [spaceId, randomUUID()],
      [spaceId, "not-a-uuid"],
      ["not-a-uuid", s.id],
    ] as const) {
      const err = await failure(h.client.startSession({ spaceId: space, sessionId: id }));
      expect(err.code).toBe(Code.NotFound);
      expect(errorDetailOf(err)?.field).toBe("session_id");
    }
  });
});

describe("stop", () => {
  it("makes one end out of concurrent stops, each answered with the ended session", async () => {
    const spaceId = await space("10");
    const s = await started(spaceId);
    h.clock.advance(20_000);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h.client.stopSession({ spaceId, sessionId: s.id })),
    );
    expect(new Set(answers.map((a) => a.session?.state))).toEqual(new Set([SessionState.ENDED]));
    expect(new Set(answers.map((a) => a.session?.duration))).toEqual(new Set([20]));
    const events = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(events.events.map((e) => e.type)).toEqual(["session.created", "session.started", "session.ended"]);
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
      ["charge", -2, 0],
    ]);
  });

  it("ends a CREATED session (USER_CLOSED by default) without charging", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const res = await h.client.stopSession({ spaceId, sessionId: s.id });
    expect(res.session).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.USER_CLOSED,
      duration: 0,
      creditsConsumed: 0,
    });
  });

  it("ends a STARTED session with the given reason, duration in whole seconds", async () => {
    const spaceId = await space();
    const s = await started(spaceId);
    h.clock.advance(12_345);
    const res = await h.client.stopSession({
      spaceId,
      sessionId: s.id,
      reason: SessionEndReason.USER_DISCONNECTED,
    });
    expect(res.session).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.USER_DISCONNECTED,
      duration: 12,
      creditsConsumed: 2,
    });
    expect(ms(res.session?.endedAt)).toBe(h.clock.now().getTime());
  });

  it("answers an ENDED session as it ended, changing nothing", async () => {
    const spaceId = await space();
    const s = await started(spaceId);
    const first = await h.client.stopSession({ spaceId, sessionId: s.id });
    h.clock.advance(3 * MINUTE);
    const again = await h.client.stopSession({
      spaceId,
      sessionId: s.id,
      reason: SessionEndReason.SERVER_ERROR,
    });
    expect(again.session?.endReason).toBe(SessionEndReason.USER_CLOSED);
    expect(again.session?.endedAt).toEqual(first.session?.endedAt);
    expect(again.session?.duration).toBe(first.session?.duration);
  });

  it("refuses an unknown reason number", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const err = await failure(
      h.client.stopSession({ spaceId, sessionId: s.id, reason: 99 as SessionEndReason }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
  });
});

describe("keep-alive", () => {
  it("answers a CREATED session without starting any timer", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const res = await h.client.keepAliveSession({ spaceId, sessionId: s.id });
    expect(res.session?.state).toBe(SessionState.CREATED);
  });

  it("moves the idle deadline of a STARTED session", async () => {
    const spaceId = await space("100");
    const s = await started(spaceId);
    h.clock.advance(4 * MINUTE);
    await h.client.keepAliveSession({ spaceId, sessionId: s.id });
    const row = await t.db
      .selectFrom("sessions")
      .selectAll()
      .where("id", "=", s.id)
      .executeTakeFirstOrThrow();
    expect(row.idle_deadline_at?.getTime()).toBe(h.clock.now().getTime() + 5 * MINUTE);
    await h.client.stopSession({ spaceId, sessionId: s.id });
  });

  it("refuses an ENDED session with 409", async () => {
    const spaceId = await space();
    const s = await ended(spaceId);
    const err = await failure(h.client.keepAliveSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.FailedPrecondition);
  });

  it("refuses a session whose idle deadline passed before the scheduler ran: it has ended", async () => {
    const spaceId = await space("100");
    const s = await started(spaceId);
    h.clock.advance(5 * MINUTE + 1);
    const err = await failure(h.client.keepAliveSession({ spaceId, sessionId: s.id }));
    expect(err.code).toBe(Code.FailedPrecondition);
    const after = defined((await h.client.getSession({ spaceId, sessionId: s.id })).session);
    expect(after.endReason).toBe(SessionEndReason.IDLE_TIMEOUT);
    expect(after.duration).toBe(300);
    // Minutes 0-4 began before the idle deadline.
    expect(after.creditsConsumed).toBe(10);
  });
});

describe("internal ends", () => {
  it("EndSession ends with the given reason; EndAvatarSessions ends every running session on an avatar", async () => {
    const spaceId = await space("100");
    const avatarId = randomUUID();
    const a = await started(spaceId, { config: config({ avatarId }) });
    const b = await newSession(h.client, { spaceId, config: config({ avatarId }) });
    const other = await started(spaceId);
    const done = await ended(spaceId);
    const res = await h.client.endAvatarSessions({ avatarId });
    expect(res.sessionIds.sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) {
      const s = (await h.client.getSession({ spaceId, sessionId: id })).session;
      expect(s?.endReason).toBe(SessionEndReason.AVATAR_DELETED);
    }
    expect((await h.client.getSession({ spaceId, sessionId: other.id })).session?.state).toBe(
      SessionState.STARTED,
    );
    expect((await h.client.getSession({ spaceId, sessionId: done.id })).session?.endReason).toBe(
      SessionEndReason.USER_CLOSED,
    );
    const hangUp = await h.client.endSession({ sessionId: other.id, reason: SessionEndReason.AGENT_HANG_UP });
    expect(hangUp.session?.endReason).toBe(SessionEndReason.AGENT_HANG_UP);
  });
});

describe("connect tickets", () => {
  it("redeems a ticket once, for its session, and counts it as activity", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const { connectTicket } = await h.client.startSession({ spaceId, sessionId: s.id });
    h.clock.advance(30_000);
    const res = await h.client.redeemConnectTicket({ ticket: connectTicket });
    expect(res.session?.id).toBe(s.id);
    expect(ms(res.session?.lastActivityAt)).toBe(h.clock.now().getTime());
    const again = await failure(h.client.redeemConnectTicket({ ticket: connectTicket }));
    expect(again.code).toBe(Code.Unauthenticated);
  });

  it("refuses expired and unknown tickets, and tickets of a session that has ended", async () => {
    const spaceId = await space();
    const s = await newSession(h.client, { spaceId });
    const first = await h.client.startSession({ spaceId, sessionId: s.id });
    h.clock.advance(60_000);
    expect((await failure(h.client.redeemConnectTicket({ ticket: first.connectTicket }))).code).toBe(
      Code.Unauthenticated,
    );
    expect((await failure(h.client.redeemConnectTicket({ ticket: "made-up" }))).code).toBe(
      Code.Unauthenticated,
    );
    expect((await failure(h.client.redeemConnectTicket({ ticket: "" }))).code).toBe(Code.Unauthenticated);
    const second = await h.client.startSession({ spaceId, sessionId: s.id });
    await h.client.stopSession({ spaceId, sessionId: s.id });
    expect((await failure(h.client.redeemConnectTicket({ ticket: second.connectTicket }))).code).toBe(
      Code.FailedPrecondition,
    );
  });
});

describe("connection state", () => {
  it("records the reported state and counts it as activity", async () => {
    const spaceId = await space();
    const s = await started(spaceId);
    h.clock.advance(4 * MINUTE);
    const res = await h.client.reportConnectionState({ sessionId: s.id, state: ConnectionState.CONNECTED });
    expect(res.session?.connectionState).toBe(ConnectionState.CONNECTED);
    h.clock.advance(4 * MINUTE);
    await h.app.scheduler.runOnce();
    expect((await h.client.getSession({ spaceId, sessionId: s.id })).session?.state).toBe(
      SessionState.STARTED,
    );
    const bad = await failure(h.client.reportConnectionState({ sessionId: s.id }));
    expect(bad.code).toBe(Code.InvalidArgument);
    await h.client.stopSession({ spaceId, sessionId: s.id });
    const after = await h.client.reportConnectionState({
      sessionId: s.id,
      state: ConnectionState.DISCONNECTED,
    });
    expect(after.session).toMatchObject({
      state: SessionState.ENDED,
      connectionState: ConnectionState.DISCONNECTED,
    });
  });
});

describe("the outbox after an operation", () => {
  it("is published at once after an operation that wrote an event, and left alone by one that wrote none", async () => {
    const spaceId = await space();
    const s = await started(spaceId);
    await h.app.outbox.kick(); // what the earlier operations left
    const kick = vi.spyOn(h.app.outbox, "kick");
    try {
      await h.client.keepAliveSession({ spaceId, sessionId: s.id });
      await h.client.reportConnectionState({ sessionId: s.id, state: ConnectionState.CONNECTED });
      expect(kick).not.toHaveBeenCalled();

      await h.client.stopSession({ spaceId, sessionId: s.id });
      expect(kick).toHaveBeenCalledTimes(1);
      await kick.mock.results[0]?.value;
      // The end's event (its message id is the session's) left the outbox without the scheduler's tick.
      const left = await t.db.selectFrom("outbox").select("id").where("msg_id", "=", s.id).execute();
      expect(left).toEqual([]);
    } finally {
      kick.mockRestore();
    }
  });
});
