import { randomUUID } from "node:crypto";
import { createClients, freePort } from "@avatar/runtime";
import {
  createTestDatabase,
  type NatsServerHandle,
  natsServerAvailable,
  type SpawnedProcess,
  spawnEntry,
  startNatsServer,
  type TestDatabase,
  waitForReady,
} from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json } from "./support.js";

/**
 * The services and two gateway replicas as separate processes on Postgres and NATS: the replicas share
 * one rate-limit budget through NATS KV, and when NATS stops, requests are still answered (fail-open).
 */

const available = natsServerAvailable();
if (!available && process.env.CI === "true") throw new Error("nats-server is required in CI");
if (!available) console.warn("nats-server not found: skipping the separate-process tests");

describe.skipIf(!available)("separate processes on Postgres and NATS", () => {
  let nats: NatsServerHandle;
  let db: TestDatabase;
  const processes: SpawnedProcess[] = [];
  const gateways: string[] = [];
  let apiKey: string;

  beforeAll(async () => {
    nats = await startNatsServer();
    db = await createTestDatabase();
    const [tokensPort, catalogPort] = [await freePort(), await freePort()];
    const urls = {
      TOKENS_URL: `http://127.0.0.1:${tokensPort}`,
      CATALOG_URL: `http://127.0.0.1:${catalogPort}`,
    };
    const shared = {
      ...urls,
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      NATS_NAMESPACE: `p${randomUUID().slice(0, 8)}`,
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
      // This test is about sharing counters, not about the store timeout: on a loaded CI machine a first
      // KV round trip can exceed the 50 ms default and the limiter would rightly fail open.
      RATE_LIMIT_STORE_TIMEOUT_MS: "1000",
    };
    const services = [
      spawnEntry("tokens", "services/tokens/src/main.ts", { ...shared, PORT: String(tokensPort) }),
      spawnEntry("catalog", "services/catalog/src/main.ts", { ...shared, PORT: String(catalogPort) }),
    ];
    processes.push(...services);
    await waitForReady(`${urls.TOKENS_URL}/readyz`, services[0] as SpawnedProcess);
    await waitForReady(`${urls.CATALOG_URL}/readyz`, services[1] as SpawnedProcess);
    for (const name of ["gateway-1", "gateway-2"]) {
      const port = await freePort();
      const gw = spawnEntry(name, "gateway/src/main.ts", {
        ...shared,
        PORT: String(port),
        HOST: "127.0.0.1",
      });
      processes.push(gw);
      gateways.push(`http://127.0.0.1:${port}`);
      await waitForReady(`http://127.0.0.1:${port}/readyz`, gw);
    }
    apiKey = `lak_sep_${randomUUID().replaceAll("-", "")}`;
    await createClients({ tokens: urls.TOKENS_URL }).tokens.createSpace({ name: "separate", apiKey });
  }, 120_000);

  afterAll(async () => {
    const codes = await Promise.all(processes.map((p) => p.stop()));
    await nats?.stop();
    await db?.drop();
    // Graceful shutdown: every process drained and exited cleanly on SIGTERM.
    expect(Object.fromEntries(processes.map((p, i) => [p.name, codes[i]]))).toEqual(
      Object.fromEntries(processes.map((p) => [p.name, 0])),
    );
  });

  const get = (gateway: string, path: string) =>
    fetch(`${gateway}${path}`, { headers: { "X-API-KEY": apiKey } });

  it("serves the catalog through either gateway", async () => {
    for (const gw of gateways) {
      const res = await get(gw, "/v1/avatars/public");
      expect(res.status).toBe(200);
      expect((await json(res)).code).toBe(100);
    }
  });

  it("shares one budget across gateway replicas through NATS KV: 12 requests split over two, exactly 10 answered", async () => {
    await atNextSecond();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => get(gateways[i % 2] as string, "/v1/voices")),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(2);
  });

  it("keeps answering with no 5xx when NATS stops, and limits again once it is back", async () => {
    await nats.stop();
    const during = await Promise.all(
      Array.from({ length: 30 }, (_, i) => get(gateways[i % 2] as string, "/v1/avatars")),
    );
    expect(during.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(processes.every((p) => p.child.exitCode === null)).toBe(true);
    expect(processes.find((p) => p.name === "gateway-1")?.output()).toMatch(/rate limit/i);

    await nats.restart();
    const deadline = Date.now() + 20_000;
    let limited = false;
    while (!limited && Date.now() < deadline) {
      await atNextSecond();
      const burst = await Promise.all(
        Array.from({ length: 12 }, () => get(gateways[0] as string, "/v1/avatars")),
      );
      expect(burst.every((r) => r.status === 200 || r.status === 429)).toBe(true);
      limited = burst.filter((r) => r.status === 429).length === 2;
    }
    expect(limited).toBe(true);
  }, 60_000);
});
