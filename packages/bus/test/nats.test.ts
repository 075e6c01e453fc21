import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type NatsServerHandle,
  natsServerAvailable,
  startNatsServer,
} from "../../testkit/src/nats-server.js";
import { type Bus, RequestTimeoutError } from "../src/bus.js";
import { createBusFromEnv } from "../src/index.js";
import { durableName } from "../src/nats/names.js";
import { connectNatsBus } from "../src/nats.js";
import { busContract, busLoggingContract } from "./contract.js";
import { recordingLogger, str, text, uniqueId, waitFor } from "./support.js";

const available = natsServerAvailable("the NATS bus tests");

/** Short bound so outage tests finish quickly; production default is DEFAULT_NATS_TIMEOUT_MS. */
const TIMEOUT_MS = 2_000;

describe.skipIf(!available)("nats", () => {
  let server: NatsServerHandle;
  const connect = () =>
    connectNatsBus({ url: server.url, logger: recordingLogger().logger, timeoutMs: TIMEOUT_MS });

  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  busContract("nats", async () => {
    const bus = await connect();
    return { bus, bus2: connect, cleanup: () => bus.close() };
  });

  busLoggingContract("nats", (logger) => connectNatsBus({ url: server.url, logger, timeoutMs: TIMEOUT_MS }));

  it("reports the server's max_payload (the test server's 8MB)", async () => {
    const bus = await connect();
    expect(bus.maxPayload()).toBe(8 * 1024 * 1024);
    await bus.close();
  });

  it("builds no error for a request that was answered (patches/@nats-io__nats-core@3.3.1.patch)", async () => {
    // nats-core's RequestOne.resolver ended with cancel(), which rejected its settled promise with a new
    // RequestError: an Error and its stack for every answered request, that nothing could see.
    const fromTransport = createRequire(createRequire(import.meta.url).resolve("@nats-io/transport-node"));
    const errors = fromTransport(
      path.join(path.dirname(fromTransport.resolve("@nats-io/nats-core")), "errors.js"),
    );
    const Original = errors.RequestError;
    let built = 0;
    errors.RequestError = class extends Original {
      constructor(...args: unknown[]) {
        super(...args);
        built++;
      }
    };
    const bus = await connect();
    try {
      const subject = `patch.${uniqueId()}`;
      bus.serve(subject, () => text("pong"));
      for (let i = 0; i < 5; i++) {
        expect(str(await bus.request(subject, text("ping"), { timeoutMs: 1_000 }))).toBe("pong");
      }
      expect(built).toBe(0);
    } finally {
      errors.RequestError = Original;
      await bus.close();
    }
  });

  it("receives a message longer than a socket read into a buffer of its own size (patches/@nats-io__nats-core@3.3.1.patch)", async () => {
    // nats-core's parser gathered a payload split over socket reads in a buffer that doubled as it
    // filled, copying what it held each time, and the message kept the grown buffer alive.
    const bus = await connect();
    try {
      const subject = `patch.${uniqueId()}`;
      const size = 1024 * 1024 + 7;
      const got: Uint8Array[] = [];
      // On one connection the subscription reaches the server before the message.
      bus.subscribe(subject, (msg) => void got.push(msg.data));
      const payload = new Uint8Array(size).map((_, i) => i % 251);
      bus.publish(subject, payload);
      await waitFor("the message", () => got.length === 1);
      const data = got[0] as Uint8Array;
      expect(Buffer.from(data).equals(Buffer.from(payload))).toBe(true);
      // Its own size, and a header block at most (the grown buffer held half as much again and more).
      expect(data.buffer.byteLength).toBeLessThan(size + 4096);
    } finally {
      await bus.close();
    }
  });

  describe("unsent bytes", () => {
    // A server of their own: these tests stop it.
    let own: NatsServerHandle;
    beforeAll(async () => {
      own = await startNatsServer();
    });
    afterAll(async () => {
      await own?.stop();
    });
    const connectOwn = () =>
      connectNatsBus({ url: own.url, logger: recordingLogger().logger, timeoutMs: TIMEOUT_MS });
    const chunk = new Uint8Array(64 * 1024);

    it("counts what is published while the server is away, and nothing once it is written", async () => {
      const bus = await connectOwn();
      try {
        await own.stop({ keepStore: true });
        await waitFor("status reconnecting", () => bus.status() === "reconnecting");
        for (let i = 0; i < 16; i++) bus.publish(`unsent.${uniqueId()}`, chunk);
        expect(bus.unsentBytes()).toBeGreaterThanOrEqual(16 * chunk.byteLength);
        await own.restart();
        await waitFor("status connected", () => bus.status() === "connected", 30_000);
        await waitFor("the kept messages to be written", () => bus.unsentBytes() === 0, 10_000);
      } finally {
        await bus.close();
      }
    });

    it("counts what a server that does not read leaves in the socket", async () => {
      const bus = await connectOwn();
      const pid = own.pid();
      if (pid === undefined) throw new Error("the server is not running");
      try {
        process.kill(pid, "SIGSTOP");
        // 64 MiB: more than the kernel's buffers of a loopback connection take.
        for (let i = 0; i < 1024; i++) {
          bus.publish(`unsent.${uniqueId()}`, chunk);
          if (i % 64 === 63) await new Promise((r) => setImmediate(r));
        }
        await new Promise((r) => setTimeout(r, 50));
        expect(bus.unsentBytes()).toBeGreaterThan(32 * 1024 * 1024);
      } finally {
        process.kill(pid, "SIGCONT");
      }
      try {
        await waitFor("the socket to drain", () => bus.unsentBytes() === 0, 10_000);
      } finally {
        await bus.close();
      }
    });
  });

  it("createBusFromEnv gives the NATS bus for a URL", async () => {
    const bus = await createBusFromEnv(server.url, { logger: recordingLogger().logger });
    expect(bus.kind).toBe("nats");
    await bus.close();
  });

  it("accepts consumer names that are not valid JetStream durable names", async () => {
    const id = uniqueId();
    const bus = await connect();
    try {
      const got: string[] = [];
      await bus.consumeDurable(
        `events.${id}.n`,
        `billing.v1 worker/${id}`,
        (m) => void got.push(str(m.data)),
      );
      await bus.publishDurable(`events.${id}.n`, text("x"));
      await waitFor("event", () => got.length === 1);
    } finally {
      await bus.close();
    }
  });

  describe.each([
    { keepStore: true, outage: "a restart that keeps the JetStream store" },
    { keepStore: false, outage: "a restart that loses all JetStream state" },
  ])("nats bus through $outage", ({ keepStore }) => {
    it("keeps running, fails operations within their bound, and works again afterwards", async () => {
      const id = uniqueId();
      const bus: Bus = await connect();
      try {
        bus.serve(`t.${id}.svc`, (m) => text(`re:${str(m.data)}`));
        const events: string[] = [];
        await bus.consumeDurable(`events.${id}.>`, `outage${id}`, (m) => void events.push(str(m.data)), {
          ackWaitMs: 2_000,
        });
        const kv = await bus.kv(`outage${id}`);
        await kv.put("k", text("before"));
        await bus.publishDurable(`events.${id}.e`, text("before"));
        await waitFor("event before outage", () => events.includes("before"));

        await server.stop({ keepStore });
        await waitFor("status reconnecting", () => bus.status() === "reconnecting");

        const bound = TIMEOUT_MS + 3_000;
        const timed = async (what: Promise<unknown>) => {
          const started = Date.now();
          const outcome = await what.then(
            () => "resolved",
            (err: unknown) => err,
          );
          return { outcome, elapsed: Date.now() - started };
        };
        expect(() => bus.publish(`t.${id}.x`, text("buffered"))).not.toThrow();
        const request = await timed(bus.request(`t.${id}.svc`, text("?"), { timeoutMs: 500 }));
        expect(request.outcome).toBeInstanceOf(RequestTimeoutError);
        expect(request.elapsed).toBeLessThan(bound);
        for (const op of [
          bus.publishDurable(`events.${id}.e`, text("during")),
          kv.get("k"),
          kv.put("k", text("during")),
          bus.kv(`other${id}`),
        ]) {
          const result = await timed(op);
          expect(result.outcome).toBeInstanceOf(Error);
          expect(result.elapsed).toBeLessThan(bound);
        }
        expect(bus.status()).toBe("reconnecting");

        await server.restart();
        await waitFor("status connected", () => bus.status() === "connected", 30_000);

        await waitFor(
          "request served after restart",
          async () => {
            const reply = await bus
              .request(`t.${id}.svc`, text("hi"), { timeoutMs: 1_000 })
              .catch(() => null);
            return reply !== null && str(reply) === "re:hi";
          },
          30_000,
        );
        await bus.publishDurable(`events.${id}.e`, text("after"));
        await waitFor(
          "event after restart reaches the existing consumer",
          () => events.includes("after"),
          30_000,
        );
        await kv.put("k", text("after"));
        const entry = await kv.get("k");
        expect(entry && str(entry.value)).toBe("after");
      } finally {
        await bus.close();
      }
    });
  });

  it("fails to connect when no server listens", async () => {
    await expect(
      connectNatsBus({ url: "nats://127.0.0.1:1", logger: recordingLogger().logger, timeoutMs: TIMEOUT_MS }),
    ).rejects.toThrow();
  });
});

describe("durableName", () => {
  it("keeps safe names and makes others safe without merging distinct names", () => {
    expect(durableName("billing-worker_1")).toBe("billing-worker_1");
    const dotted = durableName("a.b");
    const underscored = durableName("a_b");
    expect(dotted).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(dotted).not.toBe(underscored);
    expect(durableName("x".repeat(300)).length).toBeLessThanOrEqual(64);
  });
});
