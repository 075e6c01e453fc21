import { randomUUID } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClients, freePort, startEmbeddedPostgres } from "@avatar/runtime";
import { type SpawnedProcess, spawnEntry, startNatsServer, waitForReady } from "@avatar/testkit";
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
  const ports = Object.fromEntries(
    await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)),
  );
  const urls = Object.fromEntries(
    SERVICES.map((s) => [`${s.toUpperCase()}_URL`, `http://127.0.0.1:${ports[s]}`]),
  );
  const env = {
    ...urls,
    ...backendEnv,
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    NATS_NAMESPACE: `bench${randomUUID().slice(0, 6)}`,
    ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
    DATA_DIR: dir,
  };
  const spawned: SpawnedProcess[] = [];
  const ready: Promise<void>[] = [];
  for (const s of SERVICES) {
    const p = spawnEntry(s, `services/${s}/src/main.ts`, { ...env, PORT: String(ports[s]) });
    spawned.push(p);
    ready.push(waitForReady(`http://127.0.0.1:${ports[s]}/readyz`, p, 120_000));
  }
  const gatewayPort = await freePort();
  const gateway = spawnEntry("gateway", "gateway/src/main.ts", {
    ...env,
    PORT: String(gatewayPort),
    HOST: "127.0.0.1",
  });
  spawned.push(gateway);
  ready.push(waitForReady(`http://127.0.0.1:${gatewayPort}/readyz`, gateway, 120_000));
  await Promise.all(ready);

  const known = new Set(spawned.map((p) => p.child.pid));
  return {
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    clients: createClients({
      tokens: urls.TOKENS_URL,
      sessions: urls.SESSIONS_URL,
      catalog: urls.CATALOG_URL,
    }),
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
      for (const p of [...spawned].reverse()) await p.stop();
      await nats.stop();
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
