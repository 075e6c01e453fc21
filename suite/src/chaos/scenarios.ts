import { SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { apiKeyHeaders, bearer, type Cluster, call, MINUTE_MS, WAYNE } from "./cluster.js";
import { HttpLoad, isProper503, type LoadTarget, notServed, notServedNor503, tally } from "./http-load.js";
import { LiveSession, sleep } from "./live-session.js";
import { emptyReport, type FaultReport } from "./report.js";

/** How long each fault lasts and how long sessions run on after it. */
export interface Timing {
  natsOutageMs: number;
  postgresOutageMs: number;
  /** Sessions run on this long after a fault before they are stopped and billed. */
  runAfterMs: number;
  /** One request every this many ms while a fault comes and goes. */
  loadEveryMs: number;
  /** One client message every this many ms per session. */
  messageEveryMs: number;
}

/** The fault tests: short, honest. */
export const TEST_TIMING: Timing = {
  natsOutageMs: 5_000,
  postgresOutageMs: 6_000,
  runAfterMs: 2_500,
  loadEveryMs: 100,
  messageEveryMs: 200,
};

/** `pnpm chaos`: the outages of the fault run that found the problems (NATS 30 s, Postgres 10 s). */
export const CHAOS_TIMING: Timing = {
  natsOutageMs: 30_000,
  postgresOutageMs: 10_000,
  runAfterMs: 10_000,
  loadEveryMs: 50,
  messageEveryMs: 100,
};

export type Scenario = (cluster: Cluster, timing: Timing) => Promise<FaultReport>;

// ---- shared measurements ----

/** Read and write requests of the public API that need the services but not the bus. */
function publicTraffic(c: Cluster): LoadTarget[] {
  const [g1, g2] = c.gateways as [string, string];
  const key = apiKeyHeaders(c);
  const get = (gateway: string, path: string) => () => fetch(`${gateway}${path}`, { headers: key });
  const mint = (gateway: string) => () =>
    fetch(`${gateway}/v1/sessions/token`, {
      method: "POST",
      headers: { ...key, "content-type": "application/json" },
      body: JSON.stringify({ avatar_id: WAYNE, mode: "LITE" }),
    });
  return [
    { name: "GET /v1/avatars", send: get(g1, "/v1/avatars") },
    { name: "GET /v1/sessions", send: get(g2, "/v1/sessions?type=active") },
    { name: "POST /v1/sessions/token", send: mint(g1) },
    { name: "GET /v1/avatars", send: get(g2, "/v1/avatars") },
    { name: "GET /v1/sessions", send: get(g1, "/v1/sessions?type=active") },
    { name: "POST /v1/sessions/token", send: mint(g2) },
  ];
}

async function openStreaming(c: Cluster, count: number, t: Timing): Promise<LiveSession[]> {
  const sessions: LiveSession[] = [];
  for (let i = 0; i < count; i++) sessions.push(await LiveSession.open(c, i % c.gateways.length));
  for (const s of sessions) s.stream(t.messageEveryMs);
  return sessions;
}

/**
 * Stops the sessions (those still running survived the fault: started, socket still open or reopened as
 * a client would) and checks their bills: every minute that began charged once, none after the end.
 */
async function finish(c: Cluster, sessions: LiveSession[], report: FaultReport): Promise<void> {
  for (const s of sessions) s.stopStreaming();
  for (const s of sessions) report.messagesLost += (await s.settle(20_000)).length;
  for (const s of sessions) {
    const before = await s.record();
    if (before?.state === SessionState.STARTED && s.open) report.sessions.survived++;
    else report.sessions.ended++;
    await s.stop();
  }
  const minutes = await billing(
    c,
    sessions.map((s) => s.id),
  );
  report.minutes = minutes;
}

/** Minutes charged (from the ledger) against minute 0 plus every minute begun before each end. */
export async function billing(c: Cluster, ids: string[]) {
  let charged = 0;
  let expected = 0;
  let duplicated = 0;
  for (const sessionId of ids) {
    const session = await waitEnded(c, sessionId);
    const start = session?.startedAt ? timestampMs(session.startedAt) : 0;
    const end = session?.endedAt ? timestampMs(session.endedAt) : 0;
    // Sandbox sessions are free.
    if (!session?.isSandbox) expected += Math.max(1, Math.ceil((end - start) / MINUTE_MS));
    const { entries } = await c.clients.sessions.listLedgerEntries({
      spaceId: c.spaceId,
      sessionId,
      page: { pageSize: 500 },
    });
    const minutes = entries.filter((e) => e.kind === "charge").map((e) => e.minuteIndex);
    charged += new Set(minutes).size;
    duplicated += minutes.length - new Set(minutes).size;
  }
  return { charged, expected, duplicated };
}

async function waitEnded(c: Cluster, sessionId: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { session } = await c.clients.sessions.getSession({ spaceId: c.spaceId, sessionId });
    if (session?.state === SessionState.ENDED || Date.now() > deadline) return session;
    await sleep(100);
  }
}

/** Waits for the session_resumed warning each session gets from the worker that took it over. */
async function resumedAfter(sessions: LiveSession[], since: number): Promise<number> {
  let latest = 0;
  for (const s of sessions) {
    const event = await s.waitFor(
      (e) => e.type === "warning" && e.warning?.type === "session_resumed",
      30_000,
    );
    if (event) latest = Math.max(latest, Date.now() - since);
  }
  return latest;
}

async function sessionsOn(sessions: LiveSession[], worker: string): Promise<LiveSession[]> {
  const on: LiveSession[] = [];
  for (const s of sessions) if ((await s.record())?.pipelineWorkerId === worker) on.push(s);
  return on;
}

// ---- the faults ----

/** Two gateways share one budget: a burst of 30 split over both lets exactly 10 through. */
export const sharedLimits: Scenario = async (c) => {
  const report = emptyReport("shared-limits", "30 requests in one second split over 2 gateways");
  await sleep(1000 - (Date.now() % 1000) + 15);
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      fetch(`${c.gateways[i % 2]}/v1/avatars`, { headers: apiKeyHeaders(c) }).then((r) => r.status),
    ),
  );
  const byStatus: Record<string, number> = {};
  for (const s of results) byStatus[String(s)] = (byStatus[String(s)] ?? 0) + 1;
  const failed = results.filter((s) => s !== 200 && s !== 429).length;
  report.requests = { total: 30, answered: 30, failed, byStatus };
  report.figures.passed = results.filter((s) => s === 200).length;
  return report;
};

/** NATS stops under load with live sessions, and comes back; nothing is restarted. */
export const natsStopped: Scenario = async (c, t) => {
  const report = emptyReport("nats-stopped", `NATS stopped ${t.natsOutageMs / 1000} s under load`);
  const sessions = await openStreaming(c, 2, t);
  const load = new HttpLoad(publicTraffic(c), t.loadEveryMs);
  load.start();
  await sleep(1_000);
  const down = Date.now();
  await c.nats.stop({ keepStore: true });
  await sleep(t.natsOutageMs);
  await c.nats.restart();
  const back = Date.now();
  const during = sessions.flatMap((s) =>
    [...s.sent].filter(([, at]) => at >= down && at < back).map(([id]) => ({ s, id })),
  );
  await sleep(t.runAfterMs);
  await load.stop();
  report.requests = tally(load.answers, notServed);
  let caughtUp = 0;
  for (const { s, id } of during)
    caughtUp = Math.max(caughtUp, (s.acknowledged.get(id) ?? Date.now()) - back);
  const owners = await Promise.all(sessions.map(async (s) => (await s.record())?.pipelineEpoch ?? 0));
  await finish(c, sessions, report);
  report.figures.sentDuringOutage = during.length;
  report.figures.caughtUpMs = caughtUp;
  report.figures.ownersKept = owners.filter((e) => e === 1).length;
  return report;
};

/**
 * The worker running live sessions goes (`leave`), and its sessions move to the other worker; the figure
 * `movedFigure` is how long until their clients heard so. The worker is started again after.
 */
async function workerLeaves(
  c: Cluster,
  t: Timing,
  report: FaultReport,
  movedFigure: string,
  leave: (worker: string) => Promise<unknown>,
): Promise<FaultReport> {
  const sessions = await openStreaming(c, 2, t);
  await sleep(1_000);
  const worker = (await sessions[0]?.record())?.pipelineWorkerId ?? "";
  const moved = await sessionsOn(sessions, worker);
  const leftAt = Date.now();
  const outcome = await leave(worker);
  report.figures[movedFigure] = await resumedAfter(moved, leftAt);
  report.figures.moved = moved.length;
  if (outcome !== undefined) report.figures.exitCode = String(outcome);
  await sleep(t.runAfterMs);
  await finish(c, sessions, report);
  await c.topology.restart(worker);
  return report;
}

/** The worker running live sessions is killed (SIGKILL); the other worker takes them over. */
export const workerKilled: Scenario = (c, t) =>
  workerLeaves(
    c,
    t,
    emptyReport("worker-kill-9", "kill -9 of the pipeline worker of live sessions"),
    "takeoverMs",
    async (worker) => {
      c.topology.process(worker).child.kill("SIGKILL");
    },
  );

/** A worker is stopped as a rollout does (SIGTERM): it hands its live sessions over. */
export const workerRollout: Scenario = (c, t) =>
  workerLeaves(
    c,
    t,
    emptyReport("worker-sigterm", "SIGTERM (rollout) of the pipeline worker of live sessions"),
    "handoverMs",
    (worker) => c.topology.process(worker).stop(),
  );

/** One sessions replica is killed (SIGKILL) while minutes are charged and a timer is due. */
export const sessionsReplicaKilled: Scenario = async (c, t) => {
  const report = emptyReport("sessions-kill-9", "kill -9 of one of 2 sessions replicas");
  const sessions = await openStreaming(c, 2, t);
  // A session whose maximum duration (5 s) passes while a replica is down: its timer fires once.
  const short = await LiveSession.open(c, 0, { max_session_duration: 5 });
  const load = new HttpLoad(publicTraffic(c), t.loadEveryMs);
  load.start();
  await sleep(500);
  c.topology.process("sessions-1").child.kill("SIGKILL");
  await sleep(Math.max(t.runAfterMs, 6_000));
  await c.topology.restart("sessions-1");
  await load.stop();
  report.requests = tally(load.answers, notServedNor503);
  const ended = await waitEnded(c, short.id);
  const length =
    ended?.endedAt && ended.startedAt ? timestampMs(ended.endedAt) - timestampMs(ended.startedAt) : -1;
  report.figures.maxDurationEnd =
    ended?.endReason === SessionEndReason.MAX_DURATION_REACHED
      ? `${length} ms`
      : `not ended (${ended?.endReason})`;
  await finish(c, sessions, report);
  const shortBill = await billing(c, [short.id]);
  report.minutes.charged += shortBill.charged;
  report.minutes.expected += shortBill.expected;
  report.minutes.duplicated += shortBill.duplicated;
  report.sessions.ended += 1;
  return report;
};

/** Postgres stops for a while under load with live sessions, and comes back; nothing is restarted. */
export const postgresStopped: Scenario = async (c, t) => {
  const report = emptyReport(
    "postgres-stopped",
    `Postgres stopped ${t.postgresOutageMs / 1000} s under load`,
  );
  const sessions = await openStreaming(c, 2, t);
  const load = new HttpLoad(publicTraffic(c), t.loadEveryMs);
  load.start();
  await sleep(1_000);
  const down = Date.now();
  await c.pg.stop();
  await sleep(t.postgresOutageMs);
  await c.pg.restart();
  const back = Date.now();
  await sleep(t.runAfterMs);
  await load.stop();
  // A failure is anything but a success, a rate limit or a proper 503 (code 5030 and Retry-After).
  report.requests = tally(load.answers, notServedNor503);
  report.figures.proper503 = load.between(down, back + 5_000).filter(isProper503).length;
  const firstOk = load.answers.filter((a) => a.at > back && a.status < 300).map((a) => a.at);
  report.figures.recoveredMs = firstOk.length > 0 ? Math.min(...firstOk) - back : -1;
  await finish(c, sessions, report);
  return report;
};

/** A gateway dies with sockets open; their clients start again through the other and go on. */
export const gatewayKilled: Scenario = async (c, t) => {
  const report = emptyReport("gateway-kill-9", "kill -9 of a gateway with sockets open");
  const sessions = [await LiveSession.open(c, 0), await LiveSession.open(c, 0)];
  for (const s of sessions) s.stream(t.messageEveryMs);
  await sleep(1_000);
  const killedAt = Date.now();
  c.topology.process("gateway-1").child.kill("SIGKILL");
  for (const s of sessions) {
    while (s.open) await sleep(20);
    await s.reconnectElsewhere();
  }
  report.figures.reconnectedMs = Date.now() - killedAt;
  report.figures.sameSession = (await Promise.all(sessions.map((s) => s.record()))).filter(
    (r) => r?.state === SessionState.STARTED,
  ).length;
  await sleep(t.runAfterMs);
  await finish(c, sessions, report);
  await c.topology.restart("gateway-1");
  return report;
};

/**
 * A session ends while NATS is down (its event waits in the outbox), then both sessions replicas crash;
 * when NATS and the replicas are back the outbox is drained and the memory episode of the session is added.
 */
export const outboxAfterCrash: Scenario = async (c) => {
  const report = emptyReport("outbox-crash", "session ended with NATS down, both sessions replicas kill -9");
  const full = { mode: "FULL", is_sandbox: true };
  const first = await LiveSession.open(c, 0, full);
  await spoken(first, "I love sailing on the lake.");
  await first.stop();
  await transcribed(c, first.id);
  const second = await LiveSession.open(c, 1, { ...full, memory: { prev_session_id: first.id } });
  const memoryId = (await second.record())?.memoryId ?? "";
  await spoken(second, "We talked about sailing again.");
  await transcribed(c, second.id);

  await c.nats.stop({ keepStore: true });
  const stopped = await call(c.gateways[1] as string, "POST", "/v1/sessions/stop", bearer(second.token));
  report.figures.stopStatus = stopped.status;
  await sleep(500);
  report.figures.outboxRowsAtCrash = await outboxRows(c);
  c.topology.process("sessions-1").child.kill("SIGKILL");
  c.topology.process("sessions-2").child.kill("SIGKILL");
  await c.nats.restart();
  const restartAt = Date.now();
  await Promise.all([c.topology.restart("sessions-1"), c.topology.restart("sessions-2")]);
  while ((await outboxRows(c)) > 0 && Date.now() - restartAt < 30_000) await sleep(100);
  report.figures.outboxRowsAfter = await outboxRows(c);
  const episode = await episodeOf(c, memoryId, second.id, 60_000);
  report.figures.memoryEpisode = episode ? `added ${Date.now() - restartAt} ms after the restart` : "missing";
  report.sessions.ended = 2;
  report.minutes = await billing(c, [first.id, second.id]);
  return report;
};

async function spoken(s: LiveSession, text: string): Promise<void> {
  s.sendEvent({ type: "avatar.repeat", event_id: "say", text });
  const ended = await s.waitFor(
    (e) => e.type === "avatar.speak_ended" && e.source_event_id === "say",
    60_000,
  );
  if (!ended) throw new Error(`the avatar did not speak: ${s.events.map((e) => e.type).join(", ")}`);
}

async function transcribed(c: Cluster, sessionId: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const res = await call(
      c.gateways[0] as string,
      "GET",
      `/v1/sessions/${sessionId}/transcript`,
      apiKeyHeaders(c),
    );
    if (((res.data?.transcript_data as unknown[]) ?? []).length > 0) return;
    await sleep(200);
  }
  throw new Error("no transcript was written");
}

async function outboxRows(c: Cluster): Promise<number> {
  const { rows } = await c.sessionsDb.query<{ n: string }>("select count(*) as n from sessions.outbox");
  return Number(rows[0]?.n ?? 0);
}

async function episodeOf(
  c: Cluster,
  memoryId: string,
  sessionId: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await call(c.gateways[0] as string, "GET", `/v1/memory/${memoryId}`, apiKeyHeaders(c));
    const episodes = (res.data?.session_episodes as { session_id: string }[] | undefined) ?? [];
    if (episodes.some((e) => e.session_id === sessionId)) return true;
    await sleep(250);
  }
  return false;
}

/** Every fault, in an order that leaves the cluster whole after each. */
export const scenarios: Scenario[] = [
  sharedLimits,
  natsStopped,
  workerKilled,
  workerRollout,
  sessionsReplicaKilled,
  postgresStopped,
  gatewayKilled,
  outboxAfterCrash,
];
