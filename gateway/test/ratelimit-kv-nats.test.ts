import { type Bus, connectNatsBus } from "@avatar/bus";
import { type NatsServerHandle, natsServerAvailable, startNatsServer } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openKvCounterStore } from "../src/ratelimit/index.js";

/**
 * The leased counters on a real nats-server, two replicas each on a connection of its own: what the
 * tests of ratelimit-kv-store.test.ts show on a compare-and-set fake holds against JetStream's KV.
 */
const available = natsServerAvailable("the rate-limit KV tests on NATS");

describe.skipIf(!available)("KvCounterStore on NATS", () => {
  let nats: NatsServerHandle;
  const buses: Bus[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    for (const name of ["gateway-1", "gateway-2"]) {
      buses.push(await connectNatsBus({ url: nats.url, name, logger: () => {} }));
    }
  }, 30_000);

  afterAll(async () => {
    for (const bus of buses) await bus.close();
    await nats?.stop();
  });

  it("lets two replicas admit exactly a limit they count in leases, each number once", async () => {
    const replicas = await Promise.all(buses.map((bus) => openKvCounterStore(bus)));
    const limit = 640;
    const admitted: number[] = [];
    for (let round = 0; round < 400; round++) {
      const counts = await Promise.all(replicas.map((r) => r.increment("nats-shared", 11, limit)));
      admitted.push(...counts.filter((c) => c <= limit));
    }
    expect([...admitted].sort((a, b) => a - b)).toEqual(Array.from({ length: limit }, (_, i) => i + 1));
  });

  it("answers most of a steady stream from its lease, without a round trip", async () => {
    const [store] = await Promise.all(buses.map((bus) => openKvCounterStore(bus)));
    let atOnce = 0;
    for (let i = 0; i < 500; i++) {
      const answer = store?.increment("nats-stream", 12, 1_000_000);
      if (typeof answer === "number") atOnce++;
      expect(await answer).toBe(i + 1);
    }
    // Leases of 1, 2, 4, ... 256: nine round trips for 500 hits.
    expect(atOnce).toBe(491);
  });
});
