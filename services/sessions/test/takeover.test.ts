import { randomUUID } from "node:crypto";
import type { Subscription } from "@avatar/bus";
import {
  type AssignSessionRequest,
  AssignSessionRequestSchema,
  AssignSessionResponseSchema,
  WorkerHeartbeatAckSchema,
  WorkerHeartbeatSchema,
} from "@avatar/contracts/pipeline";
import { ConnectionState, SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Judgment } from "../src/judgment.js";
import {
  errorReason,
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

/**
 * Owners and their leases: a worker's heartbeats renew its leases (and let its minutes be charged); a
 * session whose owner is lost is offered to the other workers and taken under the next epoch, or ends
 * with SERVER_ERROR as of when it was last served; calls of a former owner are refused; a stopping
 * worker hands its sessions over; outages pause the judgments made on reports.
 */

const LEASE_MS = 6_000;
const TAKEOVER_MS = 10_000;
let t: SessionsTestDb;
let h: Harness;
const workers: Subscription[] = [];

beforeAll(async () => {
  t = await openSessionsDb();
});
beforeEach(async () => {
  h = harness(t.db, {
    env: {
      SESSIONS_REQUIRE_PIPELINE: "true",
      PIPELINE_ASSIGN_TIMEOUT_MS: "300",
      PIPELINE_ASSIGN_ATTEMPTS: "2",
      PIPELINE_WORKER_TIMEOUT_MS: String(LEASE_MS),
      PIPELINE_TAKEOVER_TIMEOUT_MS: String(TAKEOVER_MS),
      PIPELINE_TAKEOVER_RETRY_MS: "1000",
      SESSIONS_RECOVERY_GRACE_MS: "5000",
      SESSIONS_OUTAGE_BOUND_MS: "60000",
    },
  });
  await h.app.liveness.start();
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.unsubscribe();
  await h.app.liveness.stop();
  await h.bus.close();
});
afterAll(async () => {
  await t?.close();
});

/** A worker of the queue group that claims what it is offered; records the offers (and the requests). */
function worker(workerId: string) {
  const offers: { sessionId: string; takeover: boolean }[] = [];
  const requests: AssignSessionRequest[] = [];
  const sub = h.bus.serve(
    realtimeSubjects.assign,
    (msg) => {
      const request = fromBinary(AssignSessionRequestSchema, msg.data);
      const { sessionId, takeover } = request;
      offers.push({ sessionId, takeover });
      requests.push(request);
      return toBinary(AssignSessionResponseSchema, create(AssignSessionResponseSchema, { workerId }));
    },
    { queue: realtimeSubjects.workerQueue },
  );
  workers.push(sub);
  return { offers, requests, leave: () => sub.unsubscribe() };
}

/**
 * A heartbeat listing `leases` (session, epoch, and the latest client activity in ms when there was
 * some); answers the sessions the worker was told it lost.
 */
async function heartbeat(workerId: string, leases: [string, number, number?][]) {
  const hb = create(WorkerHeartbeatSchema, {
    worker: { id: workerId, sessionIds: leases.map(([id]) => id) },
    leases: leases.map(([sessionId, epoch, activity]) => ({
      sessionId,
      epoch,
      ...(activity === undefined ? {} : { activityAt: timestampFromMs(activity) }),
    })),
  });
  const reply = await h.bus.request(realtimeSubjects.heartbeat, toBinary(WorkerHeartbeatSchema, hb), {
    timeoutMs: 2_000,
  });
  return fromBinary(WorkerHeartbeatAckSchema, reply).lostSessionIds;
}

/** A started FULL session (2 credits a minute) owned by `owner`, which then stops taking offers. */
async function startedOn(owner: string) {
  const w = worker(owner);
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount: "100", note: "test" });
  const { id } = await newSession(h.client, { spaceId });
  const started = (await h.client.startSession({ spaceId, sessionId: id })).session;
  await w.leave();
  return { spaceId, sessionId: id, startedAt: ms(started?.startedAt) };
}

const session = async (spaceId: string, sessionId: string) =>
  (await h.client.getSession({ spaceId, sessionId })).session;

async function tick() {
  await h.app.scheduler.runOnce();
  await h.app.takeover.idle();
}

const minutesCharged = async (spaceId: string, sessionId: string) =>
  (await ledgerOf(t.db, spaceId, sessionId)).filter(([kind]) => kind === "charge").map(([, , m]) => m);

describe("activity carried by heartbeats", () => {
  const IDLE_MS = 5 * MINUTE;
  const timers = async (sessionId: string) => {
    const row = await t.db
      .selectFrom("sessions")
      .select(["last_activity_at", "idle_deadline_at", "state"])
      .where("id", "=", sessionId)
      .executeTakeFirstOrThrow();
    return { last: row.last_activity_at.getTime(), idle: row.idle_deadline_at?.getTime(), state: row.state };
  };

  it("resets the idle timer from when the activity happened, as a keep-alive would", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    expect((await timers(sessionId)).idle).toBe(startedAt + IDLE_MS);
    h.clock.advance(4 * MINUTE);
    const at = h.clock.now().getTime() - 1_500;
    expect(await heartbeat("w1", [[sessionId, 1, at]])).toEqual([]);
    expect(await timers(sessionId)).toEqual({ last: at, idle: at + IDLE_MS, state: "STARTED" });
    expect(ms((await session(spaceId, sessionId))?.lastActivityAt)).toBe(at);

    // A lease without activity renews the lease only; older activity never moves the timer back.
    h.clock.advance(1_000);
    await heartbeat("w1", [[sessionId, 1]]);
    await heartbeat("w1", [[sessionId, 1, at - 60_000]]);
    expect(await timers(sessionId)).toEqual({ last: at, idle: at + IDLE_MS, state: "STARTED" });
    await h.client.stopSession({ spaceId, sessionId });
  });

  it("counts activity stamped in the future as now", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    h.clock.advance(MINUTE);
    const now = h.clock.now().getTime();
    await heartbeat("w1", [[sessionId, 1, now + 3_600_000]]);
    expect(await timers(sessionId)).toMatchObject({ last: now, idle: now + IDLE_MS });
    await h.client.stopSession({ spaceId, sessionId });
  });

  it("does not revive a session that was idle past its deadline when the activity happened", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    h.clock.advance(IDLE_MS + 2_000);
    const late = h.clock.now().getTime() - 1_000;
    expect(await heartbeat("w1", [[sessionId, 1, late]])).toEqual([]);
    expect(await timers(sessionId)).toMatchObject({ last: startedAt, idle: startedAt + IDLE_MS });
    await tick();
    expect(await session(spaceId, sessionId)).toMatchObject({
      state: SessionState.ENDED,
      endReason: SessionEndReason.IDLE_TIMEOUT,
    });
    // Its worker hears at its next heartbeat that it does not own the session any more.
    expect(await heartbeat("w1", [[sessionId, 1, late]])).toEqual([sessionId]);
  });

  it("is not recorded from a worker that does not own the session", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    h.clock.advance(MINUTE);
    expect(await heartbeat("w2", [[sessionId, 1, h.clock.now().getTime()]])).toEqual([sessionId]);
    expect(await heartbeat("w1", [[sessionId, 2, h.clock.now().getTime()]])).toEqual([sessionId]);
    expect(await timers(sessionId)).toMatchObject({ last: startedAt, idle: startedAt + IDLE_MS });
    await h.client.stopSession({ spaceId, sessionId });
  });
});

describe("a lost worker's session", () => {
  it("is offered to the other workers when the lease runs out, and owned by the taker under the next epoch", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    const rescuer = worker("w2");
    h.clock.advance(LEASE_MS - 1);
    await tick();
    expect(rescuer.offers).toEqual([]);
    h.clock.advance(1);
    await tick();
    expect(rescuer.offers).toEqual([{ sessionId, takeover: true }]);
    expect(await session(spaceId, sessionId)).toMatchObject({
      state: SessionState.STARTED,
      pipelineWorkerId: "w2",
      pipelineEpoch: 2,
    });
    // The former owner is told it lost the session; the new one keeps it.
    expect(await heartbeat("w1", [[sessionId, 1]])).toEqual([sessionId]);
    expect(await heartbeat("w2", [[sessionId, 2]])).toEqual([]);
    // An impostor, and the new owner under a wrong epoch, are told too.
    expect(await heartbeat("w3", [[sessionId, 2]])).toEqual([sessionId]);
    expect(await heartbeat("w2", [[sessionId, 1]])).toEqual([sessionId]);
  });

  it("ends with SERVER_ERROR as of its last heartbeat when nobody takes it by the takeover deadline", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    h.clock.advance(50_000);
    expect(await heartbeat("w1", [[sessionId, 1]])).toEqual([]);
    h.clock.advance(LEASE_MS);
    await tick(); // lost; offered in vain (no worker runs)
    expect((await session(spaceId, sessionId))?.state).toBe(SessionState.STARTED);
    h.clock.advance(TAKEOVER_MS - 1);
    await tick();
    expect((await session(spaceId, sessionId))?.state).toBe(SessionState.STARTED);
    h.clock.advance(1);
    await tick();
    const ended = await session(spaceId, sessionId);
    expect(ended).toMatchObject({ state: SessionState.ENDED, endReason: SessionEndReason.SERVER_ERROR });
    expect(ms(ended?.endedAt)).toBe(startedAt + 50_000);
    // Minute 1 began at 60 s, after the worker was last heard: it is not charged.
    expect(await minutesCharged(spaceId, sessionId)).toEqual([0]);
    expect(ended?.creditsConsumed).toBe(2);
  });

  it("stays with its owner when the owner is heard from before another worker took it", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    h.clock.advance(LEASE_MS);
    await tick(); // lost, and nobody to take it
    expect(await heartbeat("w1", [[sessionId, 1]])).toEqual([]);
    h.clock.advance(TAKEOVER_MS + LEASE_MS - 1);
    await tick();
    expect(await session(spaceId, sessionId)).toMatchObject({
      state: SessionState.STARTED,
      pipelineWorkerId: "w1",
      pipelineEpoch: 1,
    });
  });

  it("charges a minute once its owner was heard serving after it began, the takeover's minute included", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    h.clock.advance(58_000);
    await heartbeat("w1", [[sessionId, 1]]);
    h.clock.advance(3_000); // 61 s: minute 1 began, nobody has served it yet
    await tick();
    expect(await minutesCharged(spaceId, sessionId)).toEqual([0]);
    worker("w2");
    h.clock.advance(LEASE_MS); // w1 lost at 64 s; w2 takes the session over
    await tick();
    expect(await minutesCharged(spaceId, sessionId)).toEqual([0]);
    expect(await heartbeat("w2", [[sessionId, 2]])).toEqual([]);
    await tick();
    expect(await minutesCharged(spaceId, sessionId)).toEqual([0, 1]);
    const charge = (await h.client.listLedgerEntries({ spaceId, sessionId })).entries.find(
      (e) => e.kind === "charge" && e.minuteIndex === 1,
    );
    expect(charge).toBeDefined();
  });
});

describe("a stopping worker", () => {
  it("hands its session to another worker at once; then it is refused as a former owner", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    const successor = worker("w2");
    const res = await h.client.releaseSession({ sessionId, workerId: "w1", pipelineEpoch: 1 });
    expect(res.workerId).toBe("w2");
    expect(successor.offers).toEqual([{ sessionId, takeover: true }]);
    // The offer carries the session as it was when offered (still the former owner's) and its config.
    expect(successor.requests[0]?.session).toMatchObject({
      id: sessionId,
      state: SessionState.STARTED,
      pipelineWorkerId: "w1",
      pipelineEpoch: 1,
    });
    expect(successor.requests[0]?.config).toEqual((await h.client.getSessionConfig({ sessionId })).config);
    expect(await session(spaceId, sessionId)).toMatchObject({ pipelineWorkerId: "w2", pipelineEpoch: 2 });
    const again = await failure(h.client.releaseSession({ sessionId, workerId: "w1", pipelineEpoch: 1 }));
    expect(again.code).toBe(Code.FailedPrecondition);
    expect(errorReason(again)).toBe("NOT_SESSION_OWNER");
  });

  it("leaves a session nobody can take waiting for a worker until the takeover deadline", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    const res = await h.client.releaseSession({ sessionId, workerId: "w1", pipelineEpoch: 1 });
    expect(res.workerId).toBe("");
    const late = worker("w2");
    h.clock.advance(2_000);
    await tick();
    expect(late.offers).toEqual([{ sessionId, takeover: true }]);
    expect(late.requests[0]?.session).toMatchObject({
      id: sessionId,
      pipelineWorkerId: "w1",
      pipelineEpoch: 1,
    });
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w2");
  });
});

describe("calls of a former owner", () => {
  it("are refused with NOT_SESSION_OWNER, and the current owner's accepted", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    worker("w2");
    h.clock.advance(LEASE_MS);
    await tick();
    const stale = { sessionId, pipelineEpoch: 1 };
    const refusals = [
      () => h.client.endSession({ ...stale, reason: SessionEndReason.USER_DISCONNECTED }),
      () => h.client.reportConnectionState({ ...stale, state: ConnectionState.DISCONNECTED }),
      () => h.client.appendTranscript({ ...stale, entries: [{ role: "avatar", transcript: "stale" }] }),
    ];
    for (const call of refusals) {
      const err = await failure(call());
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(errorReason(err)).toBe("NOT_SESSION_OWNER");
    }
    expect((await session(spaceId, sessionId))?.state).toBe(SessionState.STARTED);
    const written = await h.client.appendTranscript({
      sessionId,
      pipelineEpoch: 2,
      entries: [{ role: "avatar", transcript: "current" }],
    });
    expect(written.written).toBe(1);
    const ended = await h.client.endSession({
      sessionId,
      pipelineEpoch: 2,
      reason: SessionEndReason.AGENT_HANG_UP,
    });
    expect(ended.session?.endReason).toBe(SessionEndReason.AGENT_HANG_UP);
  });
});

describe("reports that arrive late", () => {
  it("end a session as of when its worker stopped serving it, charging no minute after that", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    h.clock.advance(85_000);
    await heartbeat("w1", [[sessionId, 1]]);
    h.clock.advance(45_000); // 130 s; the worker stopped serving at 90 s and says so only now
    const { session: ended } = await h.client.endSession({
      sessionId,
      pipelineEpoch: 1,
      reason: SessionEndReason.USER_DISCONNECTED,
      at: timestampFromMs(startedAt + 90_000),
    });
    expect(ended).toMatchObject({ state: SessionState.ENDED, endReason: SessionEndReason.USER_DISCONNECTED });
    expect(ms(ended?.endedAt)).toBe(startedAt + 90_000);
    expect(await minutesCharged(spaceId, sessionId)).toEqual([0, 1]);
  });

  it("count activity from when it happened (a keep-alive held through an outage)", async () => {
    const { spaceId, sessionId, startedAt } = await startedOn("w1");
    h.clock.advance(200_000);
    const { session: kept } = await h.client.keepAliveSession({
      spaceId,
      sessionId,
      at: timestampFromMs(startedAt + 100_000),
    });
    expect(ms(kept?.lastActivityAt)).toBe(startedAt + 100_000);
    const row = await t.db
      .selectFrom("sessions")
      .select("idle_deadline_at")
      .where("id", "=", sessionId)
      .executeTakeFirstOrThrow();
    expect(row.idle_deadline_at?.getTime()).toBe(startedAt + 100_000 + 5 * MINUTE);
    // An older report moves nothing back; one from the future counts as now.
    await h.client.keepAliveSession({ spaceId, sessionId, at: timestampFromMs(startedAt + 50_000) });
    expect(ms((await session(spaceId, sessionId))?.lastActivityAt)).toBe(startedAt + 100_000);
    await h.client.keepAliveSession({ spaceId, sessionId, at: timestampFromMs(startedAt + 900_000) });
    expect(ms((await session(spaceId, sessionId))?.lastActivityAt)).toBe(startedAt + 200_000);
  });
});

describe("judgment through outages", () => {
  it("does not take a session from its owner while the database failed, nor in the grace after", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    worker("w2");
    h.app.judgment.databaseFailed();
    h.clock.advance(50_000);
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w1");
    h.app.judgment.databaseWorks();
    h.clock.advance(4_999);
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w1");
    // Its heartbeat arrives within the grace: the owner keeps the session.
    expect(await heartbeat("w1", [[sessionId, 1]])).toEqual([]);
    h.clock.advance(1);
    await tick();
    expect(await session(spaceId, sessionId)).toMatchObject({
      state: SessionState.STARTED,
      pipelineWorkerId: "w1",
    });
  });

  it("judges again once an outage lasts longer than the bound", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    worker("w2");
    h.app.judgment.databaseFailed();
    h.clock.advance(59_999);
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w1");
    h.clock.advance(1);
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w2");
  });

  it("follows the bus: paused while it is down (up to the bound), a grace after it is back", () => {
    let status: "connected" | "reconnecting" = "connected";
    let now = 0;
    const j = new Judgment({
      busStatus: () => status,
      now: () => new Date(now),
      outageBoundMs: 60_000,
      graceMs: 10_000,
    });
    expect(j.judge()).toBe(true);
    j.started();
    expect(j.judge()).toBe(false);
    now = 10_000;
    expect(j.judge()).toBe(true);
    status = "reconnecting";
    expect(j.judge()).toBe(false);
    now = 69_999;
    expect(j.judge()).toBe(false);
    now = 70_000;
    expect(j.judge()).toBe(true);
    status = "connected";
    now = 75_000;
    expect(j.judge()).toBe(false);
    now = 85_000;
    expect(j.judge()).toBe(true);
  });
});

describe("the service starting", () => {
  it("gives running sessions a full lease (heartbeats sent while it was down were not recorded)", async () => {
    const { spaceId, sessionId } = await startedOn("w1");
    worker("w2");
    h.clock.advance(LEASE_MS * 10);
    await h.app.liveness.stop();
    await h.app.liveness.start();
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w1");
    h.clock.advance(LEASE_MS);
    await tick();
    expect((await session(spaceId, sessionId))?.pipelineWorkerId).toBe("w2");
  });
});
