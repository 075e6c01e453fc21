import { randomUUID } from "node:crypto";
import { readCatalogFile } from "@avatar/catalog";
import { Tier } from "@avatar/contracts/tokens";
import { type Clients, createClients, freePort } from "@avatar/runtime";
import {
  type NatsServerHandle,
  type PostgresServerHandle,
  type ProcessSpec,
  serviceSpecs,
  spawnTopology,
  startNatsServer,
  startPostgresServer,
  startTcpBalancer,
  type TcpBalancer,
  type Topology,
  topologyEnv,
} from "@avatar/testkit";
import pg from "pg";

/** The billed minute of a cluster: short, so that a fault run sees several minutes go by. */
export const MINUTE_MS = 2_000;
export const HEARTBEAT_MS = 300;

/** The public avatar every space may run sessions on (sandbox-enabled too). */
export const WAYNE = (() => {
  const avatar = readCatalogFile().public_avatars.find((a) => a.name === "Wayne");
  if (!avatar) throw new Error("no public avatar Wayne in the catalog");
  return avatar.id;
})();

/**
 * The whole service as separate processes on a Postgres and a NATS server of their own (so that a fault
 * run can stop them): two gateways, two sessions replicas behind a TCP balancer (as a Kubernetes
 * Service would put them), two pipeline workers, and one each of tokens, catalog, agents and memory.
 * Durations are shortened so that faults play out in seconds.
 */
export interface Cluster {
  pg: PostgresServerHandle;
  nats: NatsServerHandle;
  topology: Topology;
  sessionsBalancer: TcpBalancer;
  gateways: string[];
  clients: Clients;
  apiKey: string;
  spaceId: string;
  /** The sessions service's own tables (outbox, ledger) for figures a client cannot see. */
  sessionsDb: pg.Pool;
  workers: string[];
  stop(): Promise<Record<string, number | null>>;
}

export async function startCluster(): Promise<Cluster> {
  const postgres = await startPostgresServer();
  const nats = await startNatsServer().catch(async (err) => {
    await postgres.destroy();
    throw err;
  });
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query("create database avatar");
  await admin.end();
  const databaseUrl = new URL(postgres.url);
  databaseUrl.pathname = "/avatar";

  const sessionsPorts = [await freePort(), await freePort()];
  const sessionsBalancer = await startTcpBalancer(sessionsPorts);
  const sessionsReplica = (name: string, port: number): ProcessSpec => ({
    name,
    entry: "services/sessions/src/main.ts",
    port,
  });
  const worker = (name: string): ProcessSpec => ({
    name,
    entry: "services/pipeline/src/main.ts",
    env: { PIPELINE_WORKER_ID: name },
  });
  let topology: Topology;
  try {
    topology = await spawnTopology(
      [
        ...serviceSpecs("tokens", "catalog", "agents", "memory"),
        sessionsReplica("sessions-1", sessionsPorts[0] as number),
        sessionsReplica("sessions-2", sessionsPorts[1] as number),
        worker("pipeline-1"),
        worker("pipeline-2"),
        { name: "gateway-1", entry: "gateway/src/main.ts" },
        { name: "gateway-2", entry: "gateway/src/main.ts" },
      ],
      {
        ...topologyEnv(databaseUrl.toString(), nats.url),
        SESSIONS_URL: sessionsBalancer.url,
        LOG_LEVEL: "warn",
        SESSION_MINUTE_MS: String(MINUTE_MS),
        SESSIONS_TICK_MS: "200",
        PIPELINE_HEARTBEAT_MS: String(HEARTBEAT_MS),
        PIPELINE_WORKER_TIMEOUT_MS: String(HEARTBEAT_MS * 4),
        PIPELINE_TAKEOVER_TIMEOUT_MS: "5000",
        PIPELINE_TAKEOVER_RETRY_MS: "500",
        SESSIONS_RECOVERY_GRACE_MS: "1500",
        WS_HEARTBEAT_MS: "500",
      },
      { readyTimeoutMs: 120_000 },
    );
  } catch (err) {
    await sessionsBalancer.close();
    await nats.stop();
    await postgres.destroy();
    throw err;
  }
  const clients = createClients(
    { tokens: topology.url("tokens"), sessions: sessionsBalancer.url },
    topology.identity("avatarctl"),
  );
  const apiKey = `lak_chaos_${randomUUID().replaceAll("-", "")}`;
  const created = await clients.tokens.createSpace({ name: "chaos", apiKey, tier: Tier.PRO });
  const spaceId = created.space?.id ?? "";
  await clients.sessions.grantCredits({ spaceId, amount: "100000", note: "chaos" });
  const sessionsDb = new pg.Pool({ connectionString: databaseUrl.toString(), max: 2 });
  sessionsDb.on("error", () => {});

  return {
    pg: postgres,
    nats,
    topology,
    sessionsBalancer,
    gateways: [topology.url("gateway-1"), topology.url("gateway-2")],
    clients,
    apiKey,
    spaceId,
    sessionsDb,
    workers: ["pipeline-1", "pipeline-2"],
    stop: async () => {
      await sessionsDb.end().catch(() => {});
      // A process killed by a scenario and not started again has no exit code to report.
      const codes = await topology.stop();
      await sessionsBalancer.close();
      await nats.stop();
      await postgres.destroy();
      return codes;
    },
  };
}

/** The processes that are running (not killed and left down). */
export function running(cluster: Cluster, name: string): boolean {
  const child = cluster.topology.process(name).child;
  return child.exitCode === null && child.signalCode === null;
}

export const apiKeyHeaders = (cluster: Cluster) => ({ "X-API-KEY": cluster.apiKey });
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function call(
  gateway: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{
  status: number;
  data: Record<string, unknown> | null;
  retryAfter: string | null;
  code: number;
  message: string;
}> {
  const res = await fetch(`${gateway}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = (await res.json().catch(() => ({}))) as {
    data?: Record<string, unknown>;
    code?: number;
    message?: string;
  };
  return {
    status: res.status,
    data: payload.data ?? null,
    retryAfter: res.headers.get("retry-after"),
    code: payload.code ?? 0,
    message: payload.message ?? "",
  };
}
