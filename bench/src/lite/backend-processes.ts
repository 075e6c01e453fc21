import { randomUUID } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClients, startEmbeddedPostgres } from "@avatar/runtime";
import { serviceSpecs, spawnTopology, startNatsServer } from "@avatar/testkit";
import { type Backend, backendEnv } from "./backend.js";
import { commOf, descendants } from "./rss.js";

const SERVICES = ["tokens", "catalog", "agents", "memory", "sessions", "pipeline"] as const;

/**
 * Every service, the pipeline worker and the gateway as their own processes on embedded Postgres and a
 * local nats-server, as they would be deployed.
 */
export async function startProcessBackend(): Promise<Backend> {
  const dir = await mkdtemp(path.join(tmpdir(), "avatar-bench-lite-"));
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), persistent: false });
  const nats = await startNatsServer();
  const topology = await spawnTopology(
    [...serviceSpecs(...SERVICES), { name: "gateway", entry: "gateway/src/main.ts" }],
    {
      ...backendEnv,
      DATABASE_URL: pg.url,
      NATS_URL: nats.url,
      NATS_NAMESPACE: `bench${randomUUID().slice(0, 6)}`,
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
      DATA_DIR: dir,
    },
    120_000,
  );
  const spawned = topology.processes;
  const known = new Set(spawned.map((p) => p.child.pid));
  return {
    gatewayUrl: topology.url("gateway"),
    clients: createClients(
      {
        tokens: topology.url("tokens"),
        sessions: topology.url("sessions"),
        catalog: topology.url("catalog"),
      },
      topology.identity("avatarctl"),
    ),
    processes: () => {
      const others = descendants(process.pid).filter((pid) => !known.has(pid));
      const byComm = (comm: string) => others.filter((pid) => commOf(pid) === comm);
      return [
        ...spawned.map((p) => ({ name: p.name, pids: p.child.pid ? [p.child.pid] : [] })),
        { name: "postgres", pids: byComm("postgres") },
        { name: "nats-server", pids: byComm("nats-server") },
      ];
    },
    stop: async () => {
      await topology.stop();
      await nats.stop();
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
