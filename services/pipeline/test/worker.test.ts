import { randomUUID } from "node:crypto";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { type SessionConfig, SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import {
  AssignSessionRequestSchema,
  AssignSessionResponseSchema,
  ClientFrameSchema,
  ServerFrameSchema,
  WorkerHeartbeatAckSchema,
  WorkerHeartbeatSchema,
} from "@avatar/contracts/pipeline";
import {
  type Session,
  SessionEndedSchema,
  SessionEndReason,
  SessionSchema,
  SessionStartedSchema,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import { publishEvent, realtimeSubjects, silentLogger, topics } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { noMedia } from "../src/media/no-media.js";
import type { ModeHandler } from "../src/realtime/mode.js";
import { pipelineService } from "../src/service.js";
import type { PipelineSettings } from "../src/settings.js";
import { WorkerRegistry } from "../src/worker/registry.js";
import { PipelineWorker } from "../src/worker/worker.js";
import { ManualClock } from "./manual-clock.js";

/** A worker on an in-process bus with the sessions service faked: claims, capacity, heartbeats, ends. */

const settings: PipelineSettings = {
  PIPELINE_WORKER_ID: undefined,
  PIPELINE_CAPACITY: 2,
  PIPELINE_HEARTBEAT_MS: 5_000,
  PIPELINE_CONNECT_GRACE_MS: 60_000,
  PIPELINE_DISCONNECT_GRACE_MS: 30_000,
  PIPELINE_CONNECTION_TIMEOUT_MS: 15_000,
  PIPELINE_RECONCILE_MS: 30_000,
  PIPELINE_START_WAIT_MS: 20_000,
  PIPELINE_DRAIN_TIMEOUT_MS: 5_000,
  PIPELINE_LITE_MAX_BUFFERED_MS: 60_000,
  PIPELINE_MEDIA: false,
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function rig() {
  /** What the bus logs (a subscriber that threw). */
  const busLogs: string[] = [];
  const bus: Bus = createMemoryBus({ logger: (_level, msg) => busLogs.push(msg) });
  const clock = new ManualClock();
  const sessions = new Map<string, Session>();
  /** The sessions getSessionConfig was asked for. */
  const configAsked: string[] = [];
  const client = {
    getSessionConfig: async (req: { sessionId: string }) => {
      configAsked.push(req.sessionId);
      return {
        session: sessions.get(req.sessionId),
        config: create(SessionConfigSchema, { mode: SessionMode.LITE }),
      };
    },
    endSession: async (req: { sessionId: string; reason: SessionEndReason }) => {
      calls.push(`end ${req.sessionId}`);
      const s = sessions.get(req.sessionId);
      if (s) Object.assign(s, { state: SessionState.ENDED, endReason: req.reason });
      return { session: s };
    },
    releaseSession: async (req: { sessionId: string; workerId: string; pipelineEpoch: number }) => {
      calls.push(`release ${req.sessionId} by ${req.workerId} #${req.pipelineEpoch}`);
      return { session: sessions.get(req.sessionId), workerId: "w2" };
    },
    reportConnectionState: async (req: { sessionId: string }) => ({ session: sessions.get(req.sessionId) }),
    getTranscript: async () => ({ sessionActive: true, entries: [], nextTimestamp: 0n }),
  } as unknown as Client<typeof SessionsService>;
  const calls: string[] = [];
  const mode: ModeHandler = {
    accepts: new Set(["agent.speak"]),
    onConnected: () => {},
    handle: () => {},
    stop: async () => {},
  };
  const worker = new PipelineWorker({
    bus,
    sessions: client,
    log: silentLogger,
    settings,
    clock,
    workerId: "w1",
    modeFor: () => () => mode,
    media: noMedia,
  });
  const registry = new WorkerRegistry(bus, clock, settings.PIPELINE_HEARTBEAT_MS * 3);
  registry.start();
  worker.start();
  cleanups.push(async () => {
    await worker.stop();
    await registry.stop();
    await bus.close();
  });
  const newSession = () => {
    const s = create(SessionSchema, { id: randomUUID(), state: SessionState.CREATED });
    sessions.set(s.id, s);
    return s;
  };
  /** A session this worker started and runs, under `epoch`. */
  const running = async (epoch = 1) => {
    const s = newSession();
    await assign(s.id);
    Object.assign(s, { state: SessionState.STARTED, pipelineWorkerId: "w1", pipelineEpoch: epoch });
    clock.advance(500);
    await flush();
    return s;
  };
  /** The sessions service's side of heartbeats: records each, answers `lost`. */
  const leases: string[][] = [];
  let lost: string[] = [];
  const answerHeartbeats = () =>
    bus.serve(realtimeSubjects.heartbeat, (msg) => {
      const hb = fromBinary(WorkerHeartbeatSchema, msg.data);
      leases.push(
        hb.leases.map(
          (l) => `${l.sessionId} #${l.epoch}${l.activityAt ? ` active at ${timestampMs(l.activityAt)}` : ""}`,
        ),
      );
      return toBinary(WorkerHeartbeatAckSchema, create(WorkerHeartbeatAckSchema, { lostSessionIds: lost }));
    });
  /** Asks the workers to claim a session; `carried`: the session and config the request carries. */
  const assign = async (
    sessionId: string,
    takeover = false,
    carried: { session?: Session; config?: SessionConfig } = {},
  ) => {
    const req = toBinary(
      AssignSessionRequestSchema,
      create(AssignSessionRequestSchema, { sessionId, takeover, ...carried }),
    );
    const reply = await bus.request(realtimeSubjects.assign, req, { timeoutMs: 1_000 });
    return fromBinary(AssignSessionResponseSchema, reply).workerId;
  };
  /** A client's message to a session, as its gateway relays it. */
  const clientMessage = (sessionId: string, json: string) =>
    bus.publish(
      realtimeSubjects.clientFrames(sessionId),
      toBinary(ClientFrameSchema, create(ClientFrameSchema, { sessionId, connectionId: "c1", json })),
    );
  return {
    bus,
    busLogs,
    clock,
    worker,
    registry,
    clientMessage,
    calls,
    configAsked,
    sessions,
    newSession,
    running,
    assign,
    leases,
    answerHeartbeats,
    loseAtNextBeat: (ids: string[]) => {
      lost = ids;
    },
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe("PipelineWorker", () => {
  it("claims sessions while it has room, answers empty when full, and again for a session it runs", async () => {
    const r = rig();
    const [a, b, c] = [r.newSession(), r.newSession(), r.newSession()];
    expect(await r.assign(a.id)).toBe("w1");
    expect(await r.assign(b.id)).toBe("w1");
    expect(await r.assign(c.id)).toBe("");
    expect(await r.assign(a.id)).toBe("w1");
    expect(await r.assign("not-a-uuid")).toBe("");
    expect(r.worker.sessionIds.sort()).toEqual([a.id, b.id].sort());
  });

  it("claims from the session and config the request carries, without asking the sessions service", async () => {
    const r = rig();
    // Unknown to the faked GetSessionConfig: asking it would refuse the claim.
    const session = create(SessionSchema, { id: randomUUID(), state: SessionState.CREATED });
    const config = create(SessionConfigSchema, { mode: SessionMode.LITE });
    expect(await r.assign(session.id, false, { session, config })).toBe("w1");
    expect(r.worker.sessionIds).toEqual([session.id]);
    const ended = create(SessionSchema, { id: randomUUID(), state: SessionState.ENDED });
    expect(await r.assign(ended.id, false, { session: ended, config })).toBe("");
    expect(r.configAsked).toEqual([]);
  });

  it("asks GetSessionConfig when the request carries no session and config (an older sessions service)", async () => {
    const r = rig();
    const s = r.newSession();
    expect(await r.assign(s.id)).toBe("w1");
    expect(r.configAsked).toEqual([s.id]);
    // Only one of the two is not enough either.
    const t = r.newSession();
    expect(await r.assign(t.id, false, { session: t })).toBe("w1");
    expect(r.configAsked).toEqual([s.id, t.id]);
  });

  it("refuses a session that has already ended", async () => {
    const r = rig();
    const s = r.newSession();
    s.state = SessionState.ENDED;
    expect(await r.assign(s.id)).toBe("");
  });

  it("lists its sessions in its heartbeat, which the registry serves to operators", async () => {
    const r = rig();
    const heartbeats: string[][] = [];
    r.bus.subscribe(realtimeSubjects.heartbeat, (msg) => {
      heartbeats.push(fromBinary(WorkerHeartbeatSchema, msg.data).worker?.sessionIds ?? []);
    });
    const s = r.newSession();
    await r.assign(s.id);
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(heartbeats.at(-1)).toEqual([s.id]);
    const service = pipelineService(r.registry);
    const { worker } = await (
      service.getSessionWorker as (req: { sessionId: string }) => Promise<{
        worker: { id: string; capacity: number };
      }>
    )({ sessionId: s.id });
    expect(worker).toMatchObject({ id: "w1", capacity: 2 });
    expect(r.registry.list().map((w) => w.id)).toEqual(["w1"]);
    // A worker that stopped (it hands its sessions over first) drops out once its heartbeats are overdue.
    await r.worker.stop();
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS * 4);
    expect(r.registry.list()).toEqual([]);
  });

  it("lets a runner go when its session's end event arrives, making room again", async () => {
    const r = rig();
    const [a, b, c] = [r.newSession(), r.newSession(), r.newSession()];
    await r.assign(a.id);
    await r.assign(b.id);
    expect(await r.assign(c.id)).toBe("");
    const ended = create(SessionSchema, {
      ...a,
      state: SessionState.ENDED,
      endReason: SessionEndReason.USER_CLOSED,
    });
    await publishEvent(r.bus, topics.sessionEnded, create(SessionEndedSchema, { session: ended }), a.id);
    await flush();
    expect(r.worker.sessionIds).toEqual([b.id]);
    expect(await r.assign(c.id)).toBe("w1");
  });

  it("decodes only the start and end events of its own sessions", async () => {
    const r = rig();
    const mine = r.newSession();
    await r.assign(mine.id);
    // A field with wire type 7 after the session: the id can be read, the whole event cannot be decoded.
    const undecodable = (id: string) =>
      new Uint8Array([
        ...toBinary(
          SessionEndedSchema,
          create(SessionEndedSchema, { session: { id, state: SessionState.ENDED } }),
        ),
        0x17,
      ]);
    expect(() => fromBinary(SessionEndedSchema, undecodable(mine.id))).toThrow();
    for (const topic of [topics.sessionStarted, topics.sessionEnded]) {
      await r.bus.publishDurable(topic.subject, undecodable(randomUUID()));
    }
    await flush();
    expect(r.busLogs).toEqual([]);
    expect(r.worker.sessionIds).toEqual([mine.id]);
    // Its own session's event is decoded (and this one cannot be).
    await r.bus.publishDurable(topics.sessionEnded.subject, undecodable(mine.id));
    await flush();
    expect(r.busLogs).toEqual(["message handler failed"]);
  });

  it("begins a session when its start's event says the start was recorded for it, without asking", async () => {
    const r = rig();
    const config = create(SessionConfigSchema, { mode: SessionMode.LITE });
    const [mine, theirs] = [r.newSession(), r.newSession()];
    for (const s of [mine, theirs]) expect(await r.assign(s.id, false, { session: s, config })).toBe("w1");
    const recorded = (s: Session, workerId: string) =>
      publishEvent(
        r.bus,
        topics.sessionStarted,
        create(SessionStartedSchema, {
          session: { ...s, state: SessionState.STARTED, pipelineWorkerId: workerId, pipelineEpoch: 1 },
        }),
        s.id,
      );
    await recorded(mine, "w1");
    // Two starts of one session each had a worker assigned: the one recorded runs it.
    await recorded(theirs, "w2");
    await flush();
    expect(r.worker.runner(mine.id)?.serving).toBe(true);
    expect(r.worker.sessionIds).toEqual([mine.id]);
    // Past the moment a runner asks when no event came.
    r.clock.advance(2_000);
    await flush();
    expect(r.configAsked).toEqual([]);
  });

  it("waits for the recorded takeover, not a start's event, before running a session it takes over", async () => {
    const r = rig();
    const config = create(SessionConfigSchema, { mode: SessionMode.LITE });
    const s = r.newSession();
    Object.assign(s, { state: SessionState.STARTED, pipelineWorkerId: "w0", pipelineEpoch: 1 });
    expect(await r.assign(s.id, true, { session: s, config })).toBe("w1");
    await publishEvent(
      r.bus,
      topics.sessionStarted,
      create(SessionStartedSchema, { session: { ...s, pipelineWorkerId: "w1" } }),
      s.id,
    );
    await flush();
    expect(r.worker.runner(s.id)?.serving).toBe(false);
    // Recorded for it under the next epoch: its next check finds it so.
    Object.assign(s, { pipelineWorkerId: "w1", pipelineEpoch: 2 });
    r.clock.advance(500);
    await flush();
    expect(r.worker.runner(s.id)?.serving).toBe(true);
    expect(r.configAsked).toEqual([s.id]);
  });

  it("renews its leases under each session's epoch, and stops at once the sessions the answer says it lost", async () => {
    const r = rig();
    r.answerHeartbeats();
    const [a, b] = [await r.running(1), await r.running(4)];
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.leases.at(-1)?.sort()).toEqual([`${a.id} #1`, `${b.id} #4`].sort());
    r.loseAtNextBeat([a.id]);
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.worker.sessionIds).toEqual([b.id]);
    expect(r.calls.filter((c) => c.startsWith("end"))).toEqual([]);
  });

  it("asks nothing about its running sessions at a reconcile: a missed end is learnt from a heartbeat's answer", async () => {
    const r = rig();
    r.answerHeartbeats();
    const [a, b] = [await r.running(1), await r.running(1)];
    const asked = r.configAsked.length;
    r.clock.advance(settings.PIPELINE_RECONCILE_MS);
    await flush();
    expect(r.configAsked.length).toBe(asked);
    // a's end event never came: the answer names it lost, and its runner finds it ended.
    Object.assign(a, { state: SessionState.ENDED, endReason: SessionEndReason.USER_CLOSED });
    r.loseAtNextBeat([a.id]);
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.worker.sessionIds).toEqual([b.id]);
    expect(r.configAsked.slice(asked)).toEqual([a.id]);
  });

  it("carries each session's latest client activity in its heartbeat until one is answered", async () => {
    const r = rig();
    const s = await r.running(1);
    await r.clientMessage(s.id, '{"type":"agent.speak"}');
    await flush();
    const at = r.clock.now();
    r.clock.advance(1_000);
    await r.clientMessage(s.id, '{"type":"agent.speak"}');
    await flush();
    const latest = r.clock.now();
    expect(latest).toBeGreaterThan(at);
    // Unanswered (the sessions service is down): the activity waits for the next beat.
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    r.answerHeartbeats();
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.leases).toEqual([[`${s.id} #1 active at ${latest}`]]);
    // Answered: nothing more to carry until the client does something again.
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.leases.at(-1)).toEqual([`${s.id} #1`]);
    await r.clientMessage(s.id, '{"type":"agent.speak"}');
    await flush();
    const again = r.clock.now();
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.leases.at(-1)).toEqual([`${s.id} #1 active at ${again}`]);
  });

  it("keeps its sessions when no one answers its heartbeat (the sessions service is down)", async () => {
    const r = rig();
    const s = await r.running();
    for (let i = 0; i < 5; i++) {
      r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
      await flush();
    }
    expect(r.worker.sessionIds).toEqual([s.id]);
  });

  it("takes a running session over, replacing a runner it had lost track of, under the new epoch", async () => {
    const r = rig();
    r.answerHeartbeats();
    const s = await r.running(1);
    const before = r.worker.runner(s.id);
    Object.assign(s, { pipelineEpoch: 2 });
    expect(await r.assign(s.id, true)).toBe("w1");
    r.clock.advance(500);
    await flush();
    const after = r.worker.runner(s.id);
    expect(after).not.toBe(before);
    expect(after?.epoch).toBe(2);
    r.clock.advance(settings.PIPELINE_HEARTBEAT_MS);
    await flush();
    expect(r.leases.at(-1)).toEqual([`${s.id} #2`]);
  });

  it("on stop takes no more sessions and hands the ones it runs over instead of ending them", async () => {
    const r = rig();
    const s = await r.running(3);
    await r.worker.stop();
    expect(r.calls).toContain(`release ${s.id} by w1 #3`);
    expect(r.calls.filter((c) => c.startsWith("end"))).toEqual([]);
    expect(r.worker.sessionIds).toEqual([]);
  });

  it("on stop has handed the bus the acknowledgements its sessions owe by the time it returns", async () => {
    const r = rig();
    const s = await r.running(3);
    const message = (seq: bigint) =>
      r.bus.publish(
        realtimeSubjects.clientFrames(s.id),
        toBinary(
          ClientFrameSchema,
          create(ClientFrameSchema, {
            sessionId: s.id,
            connectionId: "c1",
            seq,
            json: '{"type":"agent.speak"}',
          }),
        ),
      );
    // The first is acknowledged with the event that greets the connection; the second waits for company.
    message(1n);
    await flush();
    message(2n);
    await flush();
    // What the worker gives the bus from here on, as it gives it (the bus closes right after stop).
    const acked: bigint[] = [];
    const publish = r.bus.publish.bind(r.bus);
    r.bus.publish = (subject, data, headers) => {
      if (subject === realtimeSubjects.serverFrames(s.id))
        acked.push(fromBinary(ServerFrameSchema, data).ackSeq);
      publish(subject, data, headers);
    };
    await r.worker.stop();
    expect(acked).toEqual([2n]);
  });
});
