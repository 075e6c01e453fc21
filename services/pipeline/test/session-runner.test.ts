import { randomUUID } from "node:crypto";
import { type Bus, type BusStatus, createMemoryBus } from "@avatar/bus";
import { ErrorDetailSchema, SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import {
  ClientFrameSchema,
  ConnectionKind,
  type ServerFrame,
  ServerFrameSchema,
  type WhepRequest,
  WhepRequestSchema,
  WhepResponseSchema,
  WhepStatus,
} from "@avatar/contracts/pipeline";
import {
  ConnectionState,
  type Session,
  SessionEndReason,
  SessionSchema,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import { realtimeSubjects, silentLogger, TurnPublisher } from "@avatar/runtime";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionMedia } from "../src/media/session-media.js";
import type { ClientEvent, ModeHandler, SessionContext } from "../src/realtime/mode.js";
import type { StoredEvent } from "../src/realtime/session-context.js";
import { type RunnerSettings, SessionRunner } from "../src/realtime/session-runner.js";
import { ManualClock } from "./manual-clock.js";

/**
 * The session runner on an in-process bus and a hand-moved clock, with the sessions service faked:
 * ownership, the sockets' lifecycle as gateways report it, envelopes, grace periods and the end.
 */

const settings: RunnerSettings = {
  PIPELINE_CONNECT_GRACE_MS: 60_000,
  PIPELINE_DISCONNECT_GRACE_MS: 30_000,
  PIPELINE_CONNECTION_TIMEOUT_MS: 15_000,
  PIPELINE_START_WAIT_MS: 20_000,
};

const buses: Bus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** The sessions service as the fake answers: reachable, down (Unavailable), or refusing a former owner. */
type Answer = "ok" | "down" | "not-owner";

function rig(
  sessionFields: MessageInitShape<typeof SessionSchema> = {},
  options: { takeover?: boolean } = {},
) {
  const bus = createMemoryBus();
  buses.push(bus);
  // The runner's view of its bus's connection, set by the test.
  let busStatus: BusStatus = "connected";
  const runnerBus = new Proxy(bus, {
    get: (target, key) => {
      if (key === "status") return () => busStatus;
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const clock = new ManualClock();
  const session: Session = create(SessionSchema, {
    id: randomUUID(),
    spaceId: randomUUID(),
    state: SessionState.STARTED,
    pipelineWorkerId: "me",
    pipelineEpoch: 1,
    ...sessionFields,
  });
  const calls: string[] = [];
  let answer: Answer = "ok";
  const respond = <T>(call: string, value: () => T): T => {
    calls.push(answer === "ok" ? call : `${call} (${answer})`);
    if (answer === "down") throw new ConnectError("down", Code.Unavailable);
    if (answer === "not-owner") {
      throw new ConnectError("not yours", Code.FailedPrecondition, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { reason: "NOT_SESSION_OWNER" }) },
      ]);
    }
    return value();
  };
  const transcript = [{ role: "user", transcript: "hello", entryId: "t1" }];
  const sessions = {
    getSessionConfig: async () => ({ session }),
    keepAliveSession: async (req: { at?: Timestamp }) =>
      respond(`keepAlive at ${req.at ? timestampMs(req.at) : "-"}`, () => ({ session })),
    reportConnectionState: async (req: { state: ConnectionState; pipelineEpoch: number }) =>
      respond(`report ${ConnectionState[req.state]} #${req.pipelineEpoch}`, () => ({ session })),
    endSession: async (req: { reason: SessionEndReason; at?: Timestamp; pipelineEpoch: number }) =>
      respond(`end ${SessionEndReason[req.reason]} #${req.pipelineEpoch}`, () => {
        session.state = SessionState.ENDED;
        session.endReason = req.reason;
        session.endedAt = req.at;
        return { session };
      }),
    appendTranscript: async () => ({ written: 0 }),
    getTranscript: async () => ({ sessionActive: true, entries: transcript, nextTimestamp: 0n }),
    releaseSession: async (req: { pipelineEpoch: number }) =>
      respond(`release #${req.pipelineEpoch}`, () => ({ session, workerId: "successor" })),
  } as unknown as Client<typeof SessionsService>;
  const handled: ClientEvent[] = [];
  const connects: string[] = [];
  const contexts: SessionContext[] = [];
  let stopped = 0;
  const mode: ModeHandler = {
    accepts: new Set(["agent.speak"]),
    onConnected: (id, first) => connects.push(`${id} ${first}`),
    handle: (e) => handled.push(e),
    stop: async () => {
      stopped++;
    },
  };
  const tracked: Promise<void>[] = [];
  const finished: string[] = [];
  const out: ServerFrame[] = [];
  const whepCalls: WhepRequest[] = [];
  let mediaStops = 0;
  const media: SessionMedia = {
    output: { speak() {}, endUtterance() {}, interrupt() {} },
    whep: async (req) => {
      whepCalls.push(req);
      return create(WhepResponseSchema, { status: WhepStatus.OK, answerSdp: "v=0 answer", viewerId: "v1" });
    },
    stop: async () => {
      mediaStops++;
    },
  };
  bus.subscribe(realtimeSubjects.serverFrames(session.id), (msg) => {
    out.push(fromBinary(ServerFrameSchema, msg.data));
  });
  const stored: StoredEvent[] = [];
  const runner = new SessionRunner(
    {
      bus: runnerBus,
      sessions,
      log: silentLogger,
      settings,
      clock,
      workerId: "me",
      modeFor: () => (ctx) => {
        contexts.push(ctx);
        return mode;
      },
      media: async () => media,
      events: { forSession: () => ({ write: (events) => stored.push(...events) }) },
      outbox: new TurnPublisher(runnerBus, silentLogger),
      onFinished: (id) => finished.push(id),
      track: (work) => tracked.push(work),
    },
    session,
    create(SessionConfigSchema, { mode: SessionMode.LITE }),
    options,
  );
  const frame = (connectionId: string, fields: MessageInitShape<typeof ClientFrameSchema>) =>
    bus.publish(
      realtimeSubjects.clientFrames(session.id),
      toBinary(
        ClientFrameSchema,
        create(ClientFrameSchema, { sessionId: session.id, connectionId, ...fields }),
      ),
    );
  const events = () =>
    out
      .filter((f) => f.json)
      .map((f) => ({ ...JSON.parse(f.json), to: f.connectionId }) as Record<string, unknown>);
  return {
    bus,
    clock,
    session,
    runner,
    calls,
    handled,
    connects,
    finished,
    out,
    events,
    stored,
    contexts,
    tracked,
    answer: (a: Answer) => {
      answer = a;
    },
    busDown: (down: boolean) => {
      busStatus = down ? "reconnecting" : "connected";
    },
    stoppedCount: () => stopped,
    whepCalls,
    mediaStops: () => mediaStops,
    whep: async (fields: MessageInitShape<typeof WhepRequestSchema>) =>
      fromBinary(
        WhepResponseSchema,
        await bus.request(
          realtimeSubjects.whep(session.id),
          toBinary(WhepRequestSchema, create(WhepRequestSchema, { sessionId: session.id, ...fields })),
          { timeoutMs: 1_000 },
        ),
      ),
    opened: (id: string) => frame(id, { connection: ConnectionKind.OPENED }),
    closed: (id: string) => frame(id, { connection: ConnectionKind.CLOSED }),
    heartbeat: (id: string, seq = 0, ackedSeq = 0) =>
      frame(id, { connection: ConnectionKind.HEARTBEAT, seq: BigInt(seq), ackedSeq: BigInt(ackedSeq) }),
    message: (id: string, json: string, seq = 0, ackedSeq = 0) =>
      frame(id, { json, seq: BigInt(seq), ackedSeq: BigInt(ackedSeq) }),
    acks: () =>
      out
        .filter((f) => f.ackSeq > 0n || f.resend)
        .map((f) => `${f.connectionId} ${f.ackSeq}${f.resend ? " resend" : ""}`),
  };
}

describe("SessionRunner", () => {
  it("answers a WHEP call of a session that has not started with UNAVAILABLE", async () => {
    const r = rig({ state: SessionState.CREATED });
    const early = await r.whep({ action: { case: "offerSdp", value: "v=0 offer" } });
    expect(early).toMatchObject({ status: WhepStatus.UNAVAILABLE, message: "the session is starting" });
    expect(r.whepCalls).toEqual([]);
  });

  it("relays WHEP calls to the session's media while it runs (a viewer may come before any socket)", async () => {
    const r = rig();
    const answer = await r.whep({ action: { case: "offerSdp", value: "v=0 offer" } });
    expect(answer).toMatchObject({ status: WhepStatus.OK, answerSdp: "v=0 answer", viewerId: "v1" });
    expect(r.whepCalls.map((c) => c.action)).toEqual([{ case: "offerSdp", value: "v=0 offer" }]);
    await r.runner.end(SessionEndReason.USER_CLOSED);
    expect(r.mediaStops()).toBe(1);
    // The subject is no longer served once the session is over here.
    await expect(r.whep({ action: { case: "deleteViewerId", value: "v1" } })).rejects.toThrow();
  });

  it("keeps frames until the start is confirmed, then says connected to the new socket", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    expect(r.events()).toMatchObject([{ type: "session.state_updated", state: "connected", to: "c1" }]);
    expect(r.connects).toEqual(["c1 true"]);
    expect(r.calls).toEqual(["report CONNECTED #1"]);
    // Every frame carries the epoch the runner serves under.
    expect(r.out.map((f) => f.epoch)).toEqual([1]);
  });

  it("lets go silently of a session the sessions service gave to another worker", async () => {
    const r = rig({ pipelineWorkerId: "someone-else" });
    r.opened("c1");
    await flush();
    expect(r.out).toEqual([]);
    expect(r.finished).toEqual([r.session.id]);
  });

  it("checks envelopes before the mode sees an event and answers refusals to the sender only", async () => {
    const r = rig();
    r.opened("c1");
    r.message("c1", "nope");
    r.message("c1", '{"type":"agent.speak","event_id":"e1","audio":"AAAA"}');
    r.message("c2", '{"type":"avatar.say","event_id":"e2"}');
    await flush();
    expect(r.handled.map((e) => [e.type, e.eventId, e.connectionId])).toEqual([["agent.speak", "e1", "c1"]]);
    const errors = r.events().filter((e) => e.type === "error");
    expect(errors).toMatchObject([
      { to: "c1", source_event_id: null, error: { type: "invalid_json" } },
      { to: "c2", source_event_id: "e2", error: { type: "wrong_mode" } },
    ]);
    // A message from a socket never announced counts as its opening.
    expect(r.connects).toEqual(["c1 true", "c2 false"]);
  });

  it("holds client activity for the worker's heartbeat, and reports keep-alives at once", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    expect(r.runner.pendingActivity).toBeUndefined();
    for (let i = 0; i < 5; i++) r.message("c1", '{"type":"agent.speak"}');
    await flush();
    expect(r.calls.filter((c) => c.startsWith("keepAlive"))).toEqual([]);
    const at = r.clock.now();
    expect(r.runner.pendingActivity).toBe(at);
    r.runner.activityCarried(at);
    expect(r.runner.pendingActivity).toBeUndefined();
    r.clock.advance(2_000);
    r.message("c1", '{"type":"session.keep_alive"}');
    await flush();
    expect(r.calls.filter((c) => c.startsWith("keepAlive"))).toEqual([`keepAlive at ${r.clock.now()}`]);
  });

  it("ends with USER_DISCONNECTED when the last socket is gone for the grace period", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    r.closed("c1");
    await flush();
    expect(r.events().at(-1)).toMatchObject({ type: "session.state_updated", state: "disconnected" });
    r.clock.advance(settings.PIPELINE_DISCONNECT_GRACE_MS - 1);
    await flush();
    expect(r.calls).not.toContain("end USER_DISCONNECTED #1");
    r.clock.advance(1);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED #1");
    expect(r.events().at(-1)).toMatchObject({ type: "session.stopped", end_reason: "USER_DISCONNECTED" });
    expect(r.out.at(-1)).toMatchObject({ close: true, closeCode: 1000, connectionId: "" });
    expect(r.stoppedCount()).toBe(1);
    expect(r.finished).toEqual([r.session.id]);
  });

  it("goes on when a client reconnects within the grace period", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    r.closed("c1");
    await flush();
    r.clock.advance(10_000);
    r.opened("c2");
    await flush();
    for (let i = 0; i < 12; i++) {
      r.clock.advance(5_000);
      r.heartbeat("c2");
      await flush();
    }
    expect(r.calls.some((c) => c.startsWith("end"))).toBe(false);
    expect(r.connects).toEqual(["c1 true", "c2 false"]);
  });

  it("counts a socket whose gateway stopped sending heartbeats as closed", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    for (let i = 0; i < 6; i++) {
      r.clock.advance(5_000);
      r.heartbeat("c1");
      await flush();
    }
    expect(r.calls).toEqual(["report CONNECTED #1"]);
    r.clock.advance(settings.PIPELINE_CONNECTION_TIMEOUT_MS + 5_000);
    await flush();
    expect(r.calls).toEqual(["report CONNECTED #1", "report DISCONNECTED #1"]);
    r.clock.advance(settings.PIPELINE_DISCONNECT_GRACE_MS);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED #1");
  });

  it("does not count sockets as closed for silence while its bus is down, and gives them a full timeout after", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    r.busDown(true);
    r.clock.advance(settings.PIPELINE_CONNECTION_TIMEOUT_MS * 3);
    await flush();
    r.busDown(false);
    r.clock.advance(settings.PIPELINE_CONNECTION_TIMEOUT_MS / 2);
    await flush();
    expect(r.calls).toEqual(["report CONNECTED #1"]);
    r.clock.advance(settings.PIPELINE_CONNECTION_TIMEOUT_MS);
    await flush();
    expect(r.calls).toEqual(["report CONNECTED #1", "report DISCONNECTED #1"]);
  });

  it("ends with USER_DISCONNECTED when nobody connects within the connect grace", async () => {
    const r = rig();
    r.clock.advance(600);
    await flush();
    r.clock.advance(settings.PIPELINE_CONNECT_GRACE_MS);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED #1");
  });

  it("on the session's end tells every socket session.stopped and closes them, once", async () => {
    const r = rig();
    r.opened("c1");
    r.opened("c2");
    await flush();
    await r.runner.ended(SessionEndReason.MAX_DURATION_REACHED);
    await r.runner.ended(SessionEndReason.MAX_DURATION_REACHED);
    await flush();
    expect(r.events().filter((e) => e.type === "session.stopped")).toMatchObject([
      { end_reason: "MAX_DURATION_REACHED", to: "" },
    ]);
    expect(r.out.filter((f) => f.close)).toHaveLength(1);
    r.message("c1", '{"type":"agent.speak"}');
    await flush();
    expect(r.handled).toHaveLength(0);
  });

  it("takes numbered messages once and in order, acknowledges them, and asks again for a gap", async () => {
    const r = rig();
    r.opened("c1");
    const speak = (n: number) => `{"type":"agent.speak","event_id":"e${n}"}`;
    r.message("c1", speak(1), 1);
    r.message("c1", speak(2), 2);
    r.message("c1", speak(2), 2); // sent again: a repeat
    r.message("c1", speak(4), 4); // 3 was lost
    await flush();
    expect(r.handled.map((e) => e.eventId)).toEqual(["e1", "e2"]);
    expect(r.acks()).toEqual(["c1 2 resend"]);
    r.message("c1", speak(3), 3);
    r.message("c1", speak(4), 4);
    await flush();
    r.clock.advance(100);
    await flush();
    expect(r.handled.map((e) => e.eventId)).toEqual(["e1", "e2", "e3", "e4"]);
    expect(r.acks()).toEqual(["c1 2 resend", "c1 4"]);
    // A heartbeat saying 6 were sent: 5 and 6 were lost on the way.
    r.heartbeat("c1", 6, 4);
    await flush();
    expect(r.acks().at(-1)).toBe("c1 4 resend");
  });

  it("sends acknowledgements with the next event rather than in frames of their own, and again for a repeat", async () => {
    const r = rig();
    r.opened("c1");
    r.opened("c2");
    r.message("c1", '{"type":"agent.speak","event_id":"e1"}', 1);
    r.message("c2", '{"type":"agent.speak","event_id":"e2"}', 1);
    await flush();
    // The mode answers the first to its sender only: the frame carries both connections' acknowledgements.
    r.contexts[0]?.send({ type: "agent.audio_buffer_appended", sourceEventId: "e1" }, "c1");
    await flush();
    const answer = r.out.at(-1);
    expect(answer?.connectionId).toBe("c1");
    expect(answer?.acks.map((a) => `${a.connectionId} ${a.seq}`)).toEqual(["c1 1", "c2 1"]);
    r.clock.advance(100);
    await flush();
    expect(r.acks()).toEqual([]);
    // The same message again: its gateway did not hear the acknowledgement, which now comes on its own.
    r.message("c1", '{"type":"agent.speak","event_id":"e1"}', 1);
    await flush();
    r.clock.advance(100);
    await flush();
    expect(r.handled.map((e) => e.eventId)).toEqual(["e1", "e2"]);
    expect(r.acks()).toEqual(["c1 1"]);
  });

  it("starts counting where the gateway's acknowledged floor is (messages taken by a former owner)", async () => {
    const r = rig();
    r.message("c1", '{"type":"agent.speak","event_id":"e8"}', 8, 7);
    await flush();
    expect(r.handled.map((e) => e.eventId)).toEqual(["e8"]);
  });

  it("stops at once, without a word to the clients, when it lost the session", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    const sent = r.out.length;
    r.answer("not-owner");
    // The connection report of a former owner is refused: it lets go.
    r.closed("c1");
    await flush();
    expect(r.finished).toEqual([r.session.id]);
    expect(r.stoppedCount()).toBe(1);
    expect(r.out.slice(sent).filter((f) => f.json.includes("session.stopped") || f.close)).toEqual([]);
    r.runner.lost("again");
    expect(r.finished).toHaveLength(1);
  });

  it("resumes a session taken over: its epoch on every frame, the transcript so far, clients told", async () => {
    const r = rig({ pipelineEpoch: 3 }, { takeover: true });
    r.heartbeat("c1", 5, 5);
    await flush();
    expect(r.contexts[0]?.resumed?.transcript.map((e) => e.transcript)).toEqual(["hello"]);
    expect(r.events()).toMatchObject([
      { type: "warning", warning: { type: "session_resumed" }, to: "" },
      { type: "session.state_updated", state: "connected", to: "c1" },
    ]);
    expect(r.out.every((f) => f.epoch === 3)).toBe(true);
    r.message("c1", '{"type":"agent.speak","event_id":"e6"}', 6, 5);
    await flush();
    expect(r.handled.map((e) => e.eventId)).toEqual(["e6"]);
  });

  it("ends a session taken over whose clients do not come back within the disconnect grace", async () => {
    const r = rig({ pipelineEpoch: 2 }, { takeover: true });
    r.clock.advance(600);
    await flush();
    r.clock.advance(settings.PIPELINE_DISCONNECT_GRACE_MS);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED #2");
  });

  it("waits for a takeover to be recorded for it, and lets go when another worker got it", async () => {
    const r = rig({ pipelineWorkerId: "previous-owner" }, { takeover: true });
    r.clock.advance(600);
    await flush();
    expect(r.finished).toEqual([]);
    r.clock.advance(settings.PIPELINE_START_WAIT_MS);
    for (let i = 0; i < 3; i++) {
      r.clock.advance(600);
      await flush();
    }
    expect(r.finished).toEqual([r.session.id]);
    expect(r.out).toEqual([]);
  });

  it("hands its session over: the mode stops, messages taken are acknowledged, the session is released", async () => {
    const r = rig();
    r.opened("c1");
    r.message("c1", '{"type":"agent.speak","event_id":"e1"}', 1);
    await flush();
    await r.runner.handOver();
    await flush();
    expect(r.stoppedCount()).toBe(1);
    expect(r.acks()).toEqual(["c1 1"]);
    expect(r.calls.at(-1)).toBe("release #1");
    expect(r.finished).toEqual([r.session.id]);
    expect(r.events().filter((e) => e.type === "session.stopped")).toEqual([]);
  });

  it("holds activity while the sessions service is down and reports it later with its time", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    r.answer("down");
    r.clock.advance(1_000);
    const at = r.clock.now();
    r.message("c1", '{"type":"session.keep_alive"}');
    await flush();
    expect(r.calls.at(-1)).toBe(`keepAlive at ${at} (down)`);
    r.answer("ok");
    r.clock.advance(300);
    await flush();
    expect(r.calls.at(-1)).toBe(`keepAlive at ${at}`);
  });

  it("ends here at once when the sessions service is down, and reports the end with its time until it arrives", async () => {
    const r = rig();
    r.opened("c1");
    await flush();
    r.answer("down");
    r.clock.advance(5_000);
    const at = r.clock.now();
    await r.runner.end(SessionEndReason.AGENT_HANG_UP);
    await flush();
    expect(r.events().at(-1)).toMatchObject({ type: "session.stopped", end_reason: "AGENT_HANG_UP" });
    expect(r.tracked).toHaveLength(1);
    r.clock.advance(2_000);
    await flush();
    r.answer("ok");
    for (let i = 0; i < 10; i++) {
      r.clock.advance(1_000);
      await flush();
    }
    await r.tracked[0];
    expect(r.calls.filter((c) => c === "end AGENT_HANG_UP #1")).toHaveLength(1);
    expect(r.session.endedAt ? timestampMs(r.session.endedAt) : 0).toBe(at);
  });
});
