import { randomUUID } from "node:crypto";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
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
import { realtimeSubjects, silentLogger } from "@avatar/runtime";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionMedia } from "../src/media/session-media.js";
import type { ClientEvent, ModeHandler } from "../src/realtime/mode.js";
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
  PIPELINE_ACTIVITY_REPORT_MS: 10_000,
  PIPELINE_START_WAIT_MS: 20_000,
};

const buses: Bus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

function rig(sessionFields: MessageInitShape<typeof SessionSchema> = {}) {
  const bus = createMemoryBus();
  buses.push(bus);
  const clock = new ManualClock();
  const session: Session = create(SessionSchema, {
    id: randomUUID(),
    spaceId: randomUUID(),
    state: SessionState.STARTED,
    pipelineWorkerId: "me",
    ...sessionFields,
  });
  const calls: string[] = [];
  const sessions = {
    getSessionConfig: async () => ({ session }),
    keepAliveSession: async () => {
      calls.push("keepAlive");
      return { session };
    },
    reportConnectionState: async (req: { state: ConnectionState }) => {
      calls.push(`report ${ConnectionState[req.state]}`);
      return { session };
    },
    endSession: async (req: { reason: SessionEndReason }) => {
      calls.push(`end ${SessionEndReason[req.reason]}`);
      session.state = SessionState.ENDED;
      session.endReason = req.reason;
      return { session };
    },
    appendTranscript: async () => ({ written: 0 }),
  } as unknown as Client<typeof SessionsService>;
  const handled: ClientEvent[] = [];
  const connects: string[] = [];
  let stopped = 0;
  const mode: ModeHandler = {
    accepts: new Set(["agent.speak"]),
    onConnected: (id, first) => connects.push(`${id} ${first}`),
    handle: (e) => handled.push(e),
    stop: async () => {
      stopped++;
    },
  };
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
  const runner = new SessionRunner(
    {
      bus,
      sessions,
      log: silentLogger,
      settings,
      clock,
      workerId: "me",
      modeFor: () => () => mode,
      media: async () => media,
      onFinished: (id) => finished.push(id),
    },
    session,
    create(SessionConfigSchema, { mode: SessionMode.LITE }),
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
    heartbeat: (id: string) => frame(id, { connection: ConnectionKind.HEARTBEAT }),
    message: (id: string, json: string) => frame(id, { json }),
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
    expect(r.calls).toEqual(["report CONNECTED"]);
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

  it("reports activity throttled and keep-alives at once", async () => {
    const r = rig();
    r.opened("c1");
    for (let i = 0; i < 5; i++) r.message("c1", '{"type":"agent.speak"}');
    await flush();
    expect(r.calls.filter((c) => c === "keepAlive")).toHaveLength(1);
    r.clock.advance(2_000);
    r.message("c1", '{"type":"session.keep_alive"}');
    await flush();
    expect(r.calls.filter((c) => c === "keepAlive")).toHaveLength(2);
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
    expect(r.calls).not.toContain("end USER_DISCONNECTED");
    r.clock.advance(1);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED");
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
    expect(r.calls).toEqual(["report CONNECTED"]);
    r.clock.advance(settings.PIPELINE_CONNECTION_TIMEOUT_MS + 5_000);
    await flush();
    expect(r.calls).toEqual(["report CONNECTED", "report DISCONNECTED"]);
    r.clock.advance(settings.PIPELINE_DISCONNECT_GRACE_MS);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED");
  });

  it("ends with USER_DISCONNECTED when nobody connects within the connect grace", async () => {
    const r = rig();
    r.clock.advance(600);
    await flush();
    r.clock.advance(settings.PIPELINE_CONNECT_GRACE_MS);
    await flush();
    expect(r.calls).toContain("end USER_DISCONNECTED");
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
});
