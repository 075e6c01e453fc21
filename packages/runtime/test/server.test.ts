import { CatalogService } from "@avatar/contracts/catalog";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { connectClient } from "../src/clients.js";
import { createDb } from "../src/db.js";
import { isDatabaseUnavailable } from "../src/db-errors.js";
import { errorDetailOf, notFound } from "../src/errors.js";
import type { Logger } from "../src/log.js";
import { freePort } from "../src/net.js";
import { onBehalfOf, REQUEST_ID_HEADER, requestIdOf } from "../src/request-id.js";
import { type Listening, listen, type ServiceApp, serviceHandler } from "../src/server.js";
import {
  caught,
  collectingLogger,
  type Gate,
  gate,
  settledWithin,
  testIdentity,
  waitFor,
} from "./support.js";

/**
 * A service on a real port whose handlers misbehave on purpose. The catalog contract only lends its
 * method shapes: listLanguages fails unexpectedly, getAvatar fails as a domain error, listLlmModels is
 * slow until `slow` opens, listPublicAvatars logs and answers.
 */
interface Harness {
  listening: Listening;
  log: Logger;
  records: ReturnType<typeof collectingLogger>["records"];
  slow: Gate;
  slowStarted: () => boolean;
  ready: { value: boolean | "throw" };
}

const running: Listening[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((l) => l.close(1_000)));
  for (const c of cleanups.splice(0)) await c();
});

async function startHarness(options: { withReady?: boolean } = {}): Promise<Harness> {
  const { log, records } = collectingLogger();
  const deadDb = createDb({ url: `postgres://nobody@127.0.0.1:${await freePort()}/none`, schema: "x" });
  cleanups.push(() => deadDb.destroy());
  const slow = gate();
  let started = false;
  const ready: Harness["ready"] = { value: true };
  const app: ServiceApp = {
    name: "test",
    routes: (router) =>
      router.service(CatalogService, {
        listLanguages() {
          throw new TypeError("database password is hunter2");
        },
        getAvatar() {
          throw notFound("Avatar not found", { field: "avatar_id" });
        },
        async listLlmModels() {
          started = true;
          await slow.promise;
          return { providers: [{ provider: "p", models: ["slow-model"] }] };
        },
        listPublicAvatars(_req, ctx) {
          log.info("serving public avatars", { request_id: requestIdOf(ctx.values) });
          return {};
        },
        listVoices() {
          throw new ConnectError("upstream broke", Code.Internal);
        },
        async getVoice() {
          // A database nobody listens for: its connection is refused.
          await deadDb.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
          return {};
        },
      }),
  };
  if (options.withReady !== false) {
    app.ready = async () => {
      if (ready.value === "throw") throw new Error("db down");
      return ready.value;
    };
  }
  const listening = await listen({ port: 0, host: "127.0.0.1" });
  running.push(listening);
  listening.setHandler(serviceHandler(app, log, testIdentity("catalog")));
  return { listening, log, records, slow, slowStarted: () => started, ready };
}

describe("listen", () => {
  it("listens on a free port and answers 503 until the handler is set", async () => {
    const listening = await listen({ port: 0, host: "127.0.0.1" });
    running.push(listening);
    expect(listening.port).toBeGreaterThan(0);
    expect(listening.url).toBe(`http://127.0.0.1:${listening.port}`);
    expect((await fetch(`${listening.url}/healthz`)).status).toBe(503);
    listening.setHandler((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect((await fetch(`${listening.url}/healthz`)).status).toBe(204);
  });

  it("gives a loopback URL when listening on every interface", async () => {
    const listening = await listen({ port: 0, host: "0.0.0.0" });
    running.push(listening);
    expect(listening.url).toBe(`http://127.0.0.1:${listening.port}`);
  });
});

describe("serviceHandler over HTTP", () => {
  it("serves /healthz, and /readyz from the app's readiness", async () => {
    const h = await startHarness();
    const url = h.listening.url;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    h.ready.value = false;
    const notReady = await fetch(`${url}/readyz?verbose=1`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: "unavailable" });
    h.ready.value = "throw";
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    // Liveness does not depend on readiness.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("is ready without a readiness check, and answers 404 elsewhere", async () => {
    const h = await startHarness({ withReady: false });
    expect((await fetch(`${h.listening.url}/readyz`)).status).toBe(200);
    const missing = await fetch(`${h.listening.url}/nothing-here`);
    expect(missing.status).toBe(404);
  });

  it("serves the Connect routes", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    h.slow.open();
    expect((await client.listLlmModels({})).providers[0]?.models).toEqual(["slow-model"]);
  });

  it("carries the caller's x-request-id into the log lines of the call", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    await client.listPublicAvatars({}, { headers: { [REQUEST_ID_HEADER]: "req-from-caller" } });
    expect(h.records().find((r) => r.msg === "serving public avatars")?.request_id).toBe("req-from-caller");
  });

  it("carries the request id a call is made on behalf of", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    await client.listPublicAvatars({}, onBehalfOf("req-upstream"));
    expect(h.records().find((r) => r.msg === "serving public avatars")?.request_id).toBe("req-upstream");
  });

  it("gives a call without a usable request id a fresh one", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    await client.listPublicAvatars({}, { headers: { [REQUEST_ID_HEADER]: "bad id with spaces" } });
    await client.listPublicAvatars({});
    const ids = h
      .records()
      .filter((r) => r.msg === "serving public avatars")
      .map((r) => r.request_id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("turns an unexpected error into Internal with its message hidden, and logs it with the stack", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    const err = await caught(client.listLanguages({}, { headers: { [REQUEST_ID_HEADER]: "req-boom" } }));
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).toBe("internal error");
    expect(err.message).not.toContain("hunter2");
    expect(JSON.stringify(err.metadata)).not.toContain("hunter2");

    const entry = h.records().find((r) => r.msg === "rpc failed unexpectedly");
    expect(entry).toMatchObject({
      level: "error",
      request_id: "req-boom",
      procedure: expect.stringContaining("/avatar.catalog.v1.CatalogService/ListLanguages"),
      err: { name: "TypeError", message: "database password is hunter2" },
    });
    expect((entry?.err as { stack?: string } | undefined)?.stack).toContain("server.test.ts");
  });

  it("passes domain errors through with their code and detail, without logging them as failures", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    const err = await caught(client.getAvatar({ avatarId: "x" }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe("Avatar not found");
    expect(errorDetailOf(err)?.field).toBe("avatar_id");
    expect(h.records().filter((r) => r.level === "error")).toEqual([]);
  });

  it("answers Unavailable (not Internal) when the database cannot be reached", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    const err = await caught(client.getVoice({ voiceId: "v" }));
    expect(err.code).toBe(Code.Unavailable);
    expect(h.records().find((r) => r.msg === "rpc failed: the database is unavailable")).toMatchObject({
      level: "warn",
    });
  });

  it("logs Connect errors that are internal failures", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    const err = await caught(client.listVoices({}));
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).toBe("upstream broke");
    expect(h.records().find((r) => r.msg === "rpc failed")).toMatchObject({ level: "error" });
  });
});

describe("close", () => {
  it("lets an in-flight slow request finish, refuses new connections, then resolves", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    const inFlight = client.listLlmModels({});
    await waitFor("the slow call to reach its handler", h.slowStarted);

    const closing = h.listening.close(60_000);
    expect(await settledWithin(closing, 200)).toBe(false);
    await expect(fetch(`${h.listening.url}/healthz`)).rejects.toThrow();

    h.slow.open();
    expect((await inFlight).providers[0]?.models).toEqual(["slow-model"]);
    // The connection the call came on is not kept for more: a later call of the same client is refused.
    const later = await caught(client.listPublicAvatars({}));
    expect(later.code).toBe(Code.Unavailable);
    await closing;
    expect(h.listening.server.listening).toBe(false);
    expect(h.records().filter((r) => r.msg === "serving public avatars")).toEqual([]);
  });

  it("cuts connections still busy when the grace period ends", async () => {
    const h = await startHarness();
    const client = connectClient(CatalogService, h.listening.url, testIdentity("gateway"));
    // A deadline well beyond the test's: only the server can end this call.
    const inFlight = client.listLlmModels({}, { timeoutMs: 120_000 });
    await waitFor("the slow call to reach its handler", h.slowStarted);
    await h.listening.close(100);
    const err = await caught(inFlight);
    // The connection was cut under the call (how the client words that is its own business).
    expect([Code.Aborted, Code.Unavailable]).toContain(err.code);
    h.slow.open();
  });

  it("resolves at once when the server is not listening", async () => {
    const h = await startHarness();
    await h.listening.close();
    await h.listening.close();
  });
});

describe("isDatabaseUnavailable", () => {
  const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code });
  it("knows connection failures, shutdowns and broken connections from refused queries", () => {
    for (const code of ["ECONNREFUSED", "08006", "08001", "57P01", "57P03", "53300"]) {
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    }
    expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([pgError("ECONNREFUSED")], "both refused"))).toBe(true);
    for (const code of ["42601", "23505", "22P02"])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("undefined is not a function"))).toBe(false);
    expect(isDatabaseUnavailable("ECONNREFUSED")).toBe(false);
  });
});
