import { randomUUID } from "node:crypto";
import { type Session, SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import type { Clients } from "@avatar/runtime";
import {
  allowedCallerClients,
  createTestDatabase,
  type NatsServerHandle,
  natsServerAvailable,
  type SpawnedProcess,
  serviceSpecs,
  spawnTopology,
  startNatsServer,
  type TestDatabase,
  type Topology,
  topologyEnv,
} from "@avatar/testkit";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient, pcmBase64 } from "./realtime-client.js";
import { bearer, eventually, WAYNE } from "./sessions-support.js";
import { json } from "./support.js";

/**
 * The realtime path with every part in its own process on Postgres and NATS: two gateways, two pipeline
 * workers, and the sessions, tokens, catalog, agents and memory services. A client starts through one
 * gateway and talks through the other; the worker running a session is killed (SIGKILL) and the other
 * takes it over with the client's socket still open; when the last worker is killed, the session ends
 * with SERVER_ERROR as of its last heartbeat, its client is told, and no minute is lost or charged twice.
 */

const available = natsServerAvailable("the realtime separate-process tests");

const HEARTBEAT_MS = 500;
const MINUTE_MS = 1_000;

describe.skipIf(!available)("realtime across processes on NATS", () => {
  let nats: NatsServerHandle;
  let db: TestDatabase;
  let topology: Topology;
  const pipelines = new Map<string, SpawnedProcess>();
  const gateways: string[] = [];
  let clients: Clients;
  let apiKey: string;
  let spaceId: string;

  beforeAll(async () => {
    nats = await startNatsServer();
    db = await createTestDatabase();
    const worker = (name: string) => ({
      name,
      entry: "services/pipeline/src/main.ts",
      env: { PIPELINE_WORKER_ID: name },
    });
    topology = await spawnTopology(
      [
        ...serviceSpecs("tokens", "catalog", "agents", "memory", "sessions"),
        worker("pipeline-1"),
        worker("pipeline-2"),
        { name: "gateway-1", entry: "gateway/src/main.ts" },
        { name: "gateway-2", entry: "gateway/src/main.ts" },
      ],
      {
        ...topologyEnv(db.url, nats.url),
        SESSION_MINUTE_MS: String(MINUTE_MS),
        SESSIONS_TICK_MS: "100",
        PIPELINE_WORKER_TIMEOUT_MS: String(HEARTBEAT_MS * 4),
        PIPELINE_HEARTBEAT_MS: String(HEARTBEAT_MS),
        PIPELINE_TAKEOVER_TIMEOUT_MS: "3000",
        SESSIONS_RECOVERY_GRACE_MS: "1000",
        WS_HEARTBEAT_MS: "500",
      },
    );
    for (const name of ["pipeline-1", "pipeline-2"]) pipelines.set(name, topology.process(name));
    gateways.push(topology.url("gateway-1"), topology.url("gateway-2"));
    clients = allowedCallerClients(
      { tokens: topology.url("tokens"), sessions: topology.url("sessions") },
      topology.identities,
    );
    apiKey = `lak_rt_${randomUUID().replaceAll("-", "")}`;
    spaceId = (await clients.tokens.createSpace({ name: "realtime", apiKey })).space?.id ?? "";
    await clients.sessions.grantCredits({ spaceId, amount: "1000", note: "test" });
  }, 180_000);

  afterAll(async () => {
    // Front to back: gateways, workers (they end their sessions), then the services.
    const codes = (await topology?.stop()) ?? {};
    await nats?.stop();
    await db?.drop();
    const killed = [...pipelines.entries()]
      .filter(([, p]) => p.child.signalCode === "SIGKILL")
      .map(([n]) => n);
    for (const name of killed) delete codes[name];
    expect(
      Object.values(codes).every((c) => c === 0),
      JSON.stringify(codes),
    ).toBe(true);
  });

  async function post(gateway: string, path: string, headers: Record<string, string>, body: unknown = {}) {
    const res = await fetch(`${gateway}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const payload = await json(res);
    return { status: res.status, data: payload.data };
  }

  async function startedLite(gateway: string) {
    const minted = await post(
      gateway,
      "/v1/sessions/token",
      { "X-API-KEY": apiKey },
      { avatar_id: WAYNE, mode: "LITE" },
    );
    expect(minted.status, JSON.stringify(minted)).toBe(200);
    const started = await post(gateway, "/v1/sessions/start", bearer(minted.data.session_token));
    expect(started.status, JSON.stringify(started)).toBe(201);
    return {
      id: minted.data.session_id as string,
      token: minted.data.session_token as string,
      wsUrl: started.data.ws_url as string,
    };
  }

  const session = async (id: string) =>
    (await clients.sessions.getSession({ spaceId, sessionId: id })).session;

  /** The ws_url of one gateway, reached through another (any replica serves any session). */
  const through = (wsUrl: string, gateway: string) => {
    const url = new URL(wsUrl);
    url.host = new URL(gateway).host;
    return url.toString();
  };

  it("runs an utterance with the client on the other gateway, and stops it", async () => {
    const s = await startedLite(gateways[0] as string);
    const client = await EventClient.connect(through(s.wsUrl, gateways[1] as string));
    await client.next("session.state_updated", (e) => e.state === "connected");
    client.send({ type: "agent.speak", event_id: "u1", audio: pcmBase64(500) });
    client.send({ type: "agent.speak_end", event_id: "end" });
    const started = await client.next("agent.speak_started");
    const ended = await client.next("agent.speak_ended", (e) => e.source_event_id === "u1");
    expect(ended.receivedAt - started.receivedAt).toBeGreaterThanOrEqual(400);
    client.send({ type: "agent.moonwalk" });
    expect((await client.next("error")).error.type).toBe("unknown_event");
    expect((await post(gateways[0] as string, "/v1/sessions/stop", bearer(s.token))).status).toBe(200);
    expect((await client.next("session.stopped")).end_reason).toBe("USER_CLOSED");
    expect((await client.closed).code).toBe(1000);
  });

  it("moves a session whose worker was killed (SIGKILL) to the other worker: the socket stays open and it goes on", async () => {
    const s = await startedLite(gateways[1] as string);
    const client = await EventClient.connect(s.wsUrl);
    await client.next("session.state_updated", (e) => e.state === "connected");
    const first = await session(s.id);
    const workerId = first?.pipelineWorkerId ?? "";
    const worker = pipelines.get(workerId);
    expect(worker, `worker ${workerId}`).toBeDefined();

    const killedAt = Date.now();
    worker?.child.kill("SIGKILL");
    // Sent while nobody serves the session: kept by the gateway and taken by the next owner.
    client.send({ type: "agent.speak", event_id: "during", audio: pcmBase64(200) });
    const resumed = await client.next("warning", (e) => e.warning?.type === "session_resumed", 30_000);
    const movedAfterMs = Date.now() - killedAt;
    const moved = await session(s.id);
    expect(moved).toMatchObject({ state: SessionState.STARTED, pipelineEpoch: 2 });
    expect(moved?.pipelineWorkerId).not.toBe(workerId);
    expect(resumed.session_id).toBe(s.id);
    expect(
      (await client.next("agent.audio_buffer_appended", (e) => e.source_event_id === "during")).type,
    ).toBe("agent.audio_buffer_appended");
    client.send({ type: "agent.speak_end", event_id: "end" });
    await client.next("agent.speak_ended", (e) => e.source_event_id === "during");
    console.log(
      `worker killed: session moved in ${movedAfterMs} ms, socket open, message sent meanwhile handled`,
    );

    // Stopped: every minute that began was charged once, none after the end.
    expect((await post(gateways[0] as string, "/v1/sessions/stop", bearer(s.token))).status).toBe(200);
    expect((await client.next("session.stopped")).end_reason).toBe("USER_CLOSED");
    const ended = await session(s.id);
    const minutes = await chargedMinutes(s.id);
    expect(minutes).toEqual(expectedMinutes(ended));
  }, 60_000);

  it("ends a session with SERVER_ERROR only when no worker can take it, as of when it was last served", async () => {
    const s = await startedLite(gateways[0] as string);
    const client = await EventClient.connect(s.wsUrl);
    await client.next("session.state_updated", (e) => e.state === "connected");
    const workerId = (await session(s.id))?.pipelineWorkerId ?? "";
    const last = pipelines.get(workerId);
    const killedAt = Date.now();
    last?.child.kill("SIGKILL");
    const ended = await eventually(async () => {
      const current = await session(s.id);
      expect(current?.state).toBe(SessionState.ENDED);
      return current;
    }, 30_000);
    expect(ended?.endReason).toBe(SessionEndReason.SERVER_ERROR);
    const endedAt = ended?.endedAt ? timestampMs(ended.endedAt) : 0;
    expect(endedAt).toBeLessThanOrEqual(killedAt);
    expect(endedAt).toBeGreaterThan(killedAt - HEARTBEAT_MS * 3);
    // The client hears it from the gateway, since no worker can say it.
    expect((await client.next("session.stopped", () => true, 15_000)).end_reason).toBe("SERVER_ERROR");
    expect(await chargedMinutes(s.id)).toEqual(expectedMinutes(ended));
  }, 60_000);

  async function chargedMinutes(sessionId: string): Promise<number[]> {
    const ledger = await clients.sessions.listLedgerEntries({ spaceId, sessionId, page: { pageSize: 100 } });
    return ledger.entries
      .filter((e) => e.kind === "charge")
      .map((e) => e.minuteIndex)
      .sort((a, b) => a - b);
  }

  /** Minute 0 (paid at the start) and every minute that began before the end: start + k * minute < end. */
  function expectedMinutes(session: Session | undefined): number[] {
    const start = session?.startedAt ? timestampMs(session.startedAt) : 0;
    const end = session?.endedAt ? timestampMs(session.endedAt) : 0;
    const count = Math.max(1, Math.ceil((end - start) / MINUTE_MS));
    return Array.from({ length: count }, (_, k) => k);
  }
});
