import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type NatsServerHandle,
  natsServerAvailable,
  startNatsServer,
} from "../../testkit/src/nats-server.js";
import { withNamespace } from "../src/index.js";
import { createMemoryBus } from "../src/memory.js";
import { connectNatsBus } from "../src/nats.js";
import { busContract } from "./contract.js";
import { recordingLogger, str, text, uniqueId, waitFor } from "./support.js";

/** A namespaced bus keeps the whole contract, and two namespaces on one server never see each other. */

busContract("namespaced memory", async () => {
  const bus = withNamespace(createMemoryBus({ logger: recordingLogger().logger }), "ns_a");
  return { bus, cleanup: () => bus.close() };
});

const available = natsServerAvailable("the namespace tests");

describe.skipIf(!available)("namespaces on one NATS server", () => {
  let server: NatsServerHandle;
  const connect = async (ns: string) =>
    withNamespace(
      await connectNatsBus({ url: server.url, logger: recordingLogger().logger, timeoutMs: 2_000 }),
      ns,
    );

  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  busContract("namespaced nats", async () => {
    const ns = `n${uniqueId().replace(/[^A-Za-z0-9]/g, "")}`;
    const bus = await connect(ns);
    return { bus, bus2: () => connect(ns), cleanup: () => bus.close() };
  });

  it("delivers events, messages and KV entries only within their namespace", async () => {
    const a = await connect("tenant_a");
    const b = await connect("tenant_b");
    try {
      const gotA: string[] = [];
      const gotB: string[] = [];
      await a.consumeDurable(
        "events.sessions.ended",
        "memory",
        (m) => void gotA.push(`${m.subject}:${str(m.data)}`),
      );
      await b.consumeDurable(
        "events.sessions.ended",
        "memory",
        (m) => void gotB.push(`${m.subject}:${str(m.data)}`),
      );
      a.subscribe("rt.x", (m) => void gotA.push(`${m.subject}:${str(m.data)}`));
      b.subscribe("rt.x", (m) => void gotB.push(`${m.subject}:${str(m.data)}`));
      await a.publishDurable("events.sessions.ended", text("a1"));
      await b.publishDurable("events.sessions.ended", text("b1"));
      a.publish("rt.x", text("a2"));
      await waitFor("both namespaces", () => gotA.length === 2 && gotB.length === 1);
      expect(gotA.sort()).toEqual(["events.sessions.ended:a1", "rt.x:a2"]);
      expect(gotB).toEqual(["events.sessions.ended:b1"]);
      const kvA = await a.kv("ratelimit");
      const kvB = await b.kv("ratelimit");
      await kvA.put("k", text("1"));
      expect(await kvB.get("k")).toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
