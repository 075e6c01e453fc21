import { randomUUID } from "node:crypto";
import { createClients } from "@avatar/runtime";
import {
  createTestDatabase,
  type NatsServerHandle,
  natsServerAvailable,
  serviceSpecs,
  spawnTopology,
  startNatsServer,
  type TestDatabase,
  type Topology,
  topologyEnv,
} from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json } from "./support.js";

/**
 * The services and two gateway replicas as separate processes on Postgres and NATS: the replicas share
 * one rate-limit budget through NATS KV, and when NATS stops, requests are still answered (fail-open).
 */

const available = natsServerAvailable("the separate-process tests");

describe.skipIf(!available)("separate processes on Postgres and NATS", () => {
  let nats: NatsServerHandle;
  let db: TestDatabase;
  let topology: Topology;
  const gateways: string[] = [];
  let apiKey: string;

  beforeAll(async () => {
    nats = await startNatsServer();
    db = await createTestDatabase();
    topology = await spawnTopology(
      [
        ...serviceSpecs("tokens", "catalog"),
        { name: "gateway-1", entry: "gateway/src/main.ts" },
        { name: "gateway-2", entry: "gateway/src/main.ts" },
      ],
      topologyEnv(db.url, nats.url),
    );
    gateways.push(topology.url("gateway-1"), topology.url("gateway-2"));
    apiKey = `lak_sep_${randomUUID().replaceAll("-", "")}`;
    const operator = createClients({ tokens: topology.url("tokens") }, topology.identity("avatarctl"));
    await operator.tokens.createSpace({ name: "separate", apiKey });
  }, 120_000);

  afterAll(async () => {
    const codes = await topology?.stop();
    await nats?.stop();
    await db?.drop();
    // Graceful shutdown: every process drained and exited cleanly on SIGTERM.
    expect(codes).toEqual(Object.fromEntries(topology.processes.map((p) => [p.name, 0])));
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
    expect(topology.processes.every((p) => p.child.exitCode === null)).toBe(true);
    expect(topology.process("gateway-1").output()).toMatch(/rate limit/i);

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
