import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { SessionMode, SessionSource } from "@avatar/contracts/common";
import {
  SessionEndedSchema,
  SessionEndReason,
  SessionSchema,
  SessionState,
} from "@avatar/contracts/sessions";
import { WebhooksService } from "@avatar/contracts/webhooks";
import {
  type Clients,
  checkEgressTarget,
  createEgressFetch,
  EgressError,
  publishEvent,
  silentLogger,
  topics,
} from "@avatar/runtime";
import { openServiceDb, type ServiceTestDb, waitFor } from "@avatar/testkit";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { type Kysely, PostgresQueryCompiler } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { httpDeliver, webhookEgressPolicy } from "../src/deliver.js";
import { build, type Deliver, type DeliveryResult, type WebhooksApp } from "../src/index.js";
import { migrations } from "../src/migrations/index.js";
import type { WebhooksDatabase } from "../src/schema.js";
import { cachedSubscribers, SUBSCRIBERS_TTL_MS } from "../src/subscribers.js";

/**
 * The webhooks service on a real Postgres and the in-process bus: session events in, signed deliveries
 * out. Time is a hand-moved clock wherever the service judges it (due attempts, backoff, disabling).
 */

let t: ServiceTestDb<WebhooksDatabase>;
const running: { app: WebhooksApp; bus: Bus }[] = [];
const DAY = 86_400_000;

beforeAll(async () => {
  t = await openServiceDb<WebhooksDatabase>("webhooks", migrations);
});
afterAll(async () => {
  await t?.close();
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.app.stop?.();
    await r.bus.close();
  }
});

interface Sent {
  url: string;
  body: string;
  headers: Record<string, string>;
}

async function start(
  options: {
    deliver?: Deliver;
    now?: () => Date;
    env?: Record<string, string>;
    db?: Kysely<WebhooksDatabase>;
  } = {},
) {
  const bus = createMemoryBus({ logger: () => {} });
  const clients = {
    sessions: { getTranscript: async () => ({ entries: [{ transcript: "hi" }, { transcript: "hello" }] }) },
  } as unknown as Clients;
  const app = build(
    {
      db: options.db ?? t.db,
      bus,
      log: silentLogger,
      clients,
      env: {
        ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 3).toString("base64")}`,
        WEBHOOKS_TRANSCRIPT_SETTLE_MS: "0",
        ...options.env,
      },
    },
    {
      manualDispatch: true,
      ...(options.deliver ? { deliver: options.deliver } : {}),
      ...(options.now ? { now: options.now } : {}),
    },
  );
  await app.start?.();
  running.push({ app, bus });
  const client = createClient(
    WebhooksService,
    createRouterTransport((router) => app.routes(router)),
  );
  return { app, bus, client };
}

/** A hand-moved clock. */
function clock(start = Date.now()) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

function recording(answers: (DeliveryResult | number)[] = [200]) {
  const sent: Sent[] = [];
  const deliver: Deliver = async (url, body, headers) => {
    sent.push({ url, body, headers });
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    return typeof answer === "number" ? { status: answer } : (answer ?? { status: 200 });
  };
  return { sent, deliver };
}

function endedSession(spaceId: string, overrides: { endReason?: SessionEndReason } = {}) {
  const at = new Date();
  return create(SessionSchema, {
    id: randomUUID(),
    spaceId,
    state: SessionState.ENDED,
    mode: SessionMode.FULL,
    source: SessionSource.API,
    endReason: SessionEndReason.USER_CLOSED,
    duration: 42,
    creditsConsumed: 2,
    startedAt: timestampFromDate(new Date(at.getTime() - 42_000)),
    endedAt: timestampFromDate(at),
    ...overrides,
  });
}

async function publishEnded(bus: Bus, session: ReturnType<typeof endedSession>, msgId = randomUUID()) {
  await publishEvent(bus, topics.sessionEnded, create(SessionEndedSchema, { session }), msgId);
}

const pendingOf = async (endpointId: string) =>
  t.db.selectFrom("deliveries").selectAll().where("endpoint_id", "=", endpointId).execute();

/** An endpoint of the space for session.ended at `url`. */
const endedEndpoint = (client: Awaited<ReturnType<typeof start>>["client"], spaceId: string, url: string) =>
  client.createEndpoint({ spaceId, url, eventTypes: ["session.ended"] });

/**
 * A fresh space with an endpoint for session.ended at `url`, and one such event published and turned
 * into its pending delivery.
 */
async function deliveryOfOneEvent(
  bus: Bus,
  client: Awaited<ReturnType<typeof start>>["client"],
  url: string,
) {
  const spaceId = randomUUID();
  const { endpoint } = await endedEndpoint(client, spaceId, url);
  await publishEnded(bus, endedSession(spaceId));
  await waitFor("the delivery", async () => (await pendingOf(endpoint?.id ?? "")).length === 1);
  return { spaceId, endpoint };
}

/** Standard Webhooks verification written from the specification with WebCrypto: not the service's code. */
async function independentlyVerified(secret: string, headers: Record<string, string>, body: string) {
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const content = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(content)));
  const expected = `v1,${btoa(String.fromCharCode(...mac))}`;
  return (headers["webhook-signature"] ?? "").split(" ").includes(expected);
}

describe("registration", () => {
  it("registers an endpoint, shows its secret once, lists and deletes it; another space sees nothing", async () => {
    const { client } = await start();
    const spaceId = randomUUID();
    const created = await client.createEndpoint({
      spaceId,
      url: "https://hooks.example.com/avatar",
      eventTypes: ["session.ended", "session.ended", "memory.created"],
      description: "prod",
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.endpoint?.eventTypes).toEqual(["session.ended", "memory.created"]);
    const id = created.endpoint?.id ?? "";
    const listed = await client.listEndpoints({ spaceId });
    expect(listed.endpoints.map((e) => e.id)).toEqual([id]);
    // Stored sealed, never in the clear.
    const stored = await t.db
      .selectFrom("endpoints")
      .select("secret_sealed")
      .where("id", "=", id)
      .executeTakeFirst();
    expect(stored?.secret_sealed).not.toContain(created.secret.slice(6, 20));
    const stranger = randomUUID();
    expect((await client.listEndpoints({ spaceId: stranger })).endpoints).toEqual([]);
    const err = await client.getEndpoint({ spaceId: stranger, endpointId: id }).catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.NotFound);
    await client.deleteEndpoint({ spaceId, endpointId: id });
    expect((await client.listEndpoints({ spaceId })).endpoints).toEqual([]);
  });

  it.each([
    ["ftp://hooks.example.com/x", "http or https"],
    ["https://user:pw@hooks.example.com/x", "user name or password"],
    ["https://hooks.example.com/x#frag", "fragment"],
    ["not a url", "must be an absolute http or https URL"],
  ])("refuses %s", async (url, why) => {
    const { client } = await start();
    const err = ConnectError.from(
      await client
        .createEndpoint({ spaceId: randomUUID(), url, eventTypes: ["session.ended"] })
        .catch((e) => e),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain(why);
  });

  it("refuses unknown or no event types", async () => {
    const { client } = await start();
    for (const eventTypes of [[], ["session.exploded"]]) {
      const err = ConnectError.from(
        await client
          .createEndpoint({ spaceId: randomUUID(), url: "https://h.example.com/", eventTypes })
          .catch((e) => e),
      );
      expect(err.code).toBe(Code.InvalidArgument);
    }
  });
});

describe("delivery", () => {
  it("signs every request (verified by an independent implementation) with a webhook-id stable across events and endpoints", async () => {
    const { deliver, sent } = recording();
    const { bus, client, app } = await start({ deliver });
    const spaceId = randomUUID();
    const a = await endedEndpoint(client, spaceId, "https://a.example.com/");
    const b = await endedEndpoint(client, spaceId, "https://b.example.com/");
    const session = endedSession(spaceId, { endReason: SessionEndReason.IDLE_TIMEOUT });
    // The same event twice (a redelivery with another bus message id): one delivery per endpoint.
    await publishEnded(bus, session);
    await publishEnded(bus, session);
    await waitFor(
      "two deliveries",
      async () =>
        (
          await t.db
            .selectFrom("deliveries")
            .selectAll()
            .where("message_id", "like", "msg_%")
            .where("endpoint_id", "in", [a.endpoint?.id ?? "", b.endpoint?.id ?? ""])
            .execute()
        ).length === 2,
    );
    await new Promise((r) => setTimeout(r, 100));
    await app.dispatcher.runOnce();

    expect(sent.map((s) => s.url).sort()).toEqual(["https://a.example.com/", "https://b.example.com/"]);
    const ids = new Set(sent.map((s) => s.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    for (const s of sent) {
      const secret = s.url.startsWith("https://a") ? a.secret : b.secret;
      expect(await independentlyVerified(secret, s.headers, s.body)).toBe(true);
      expect(await independentlyVerified(secret, s.headers, s.body.replace("IDLE", "USER"))).toBe(false);
    }
    const body = JSON.parse(sent[0]?.body ?? "{}");
    expect(body).toMatchObject({
      type: "session.ended",
      data: {
        session_id: session.id,
        end_reason: "IDLE_TIMEOUT",
        duration: 42,
        credits_used: 2,
        mode: "FULL",
      },
    });
    // A later, separate service replica dedupes the same event into the same id.
    await publishEnded(bus, session);
    await new Promise((r) => setTimeout(r, 100));
    expect((await pendingOf(a.endpoint?.id ?? "")).map((d) => d.message_id)).toEqual([...ids]);
  });

  it("retries after a 500, with the same webhook-id, once the backoff has passed", async () => {
    const c = clock();
    const { deliver, sent } = recording([500, 200]);
    const { bus, client, app } = await start({ deliver, now: c.now });
    const { spaceId, endpoint } = await deliveryOfOneEvent(bus, client, "https://r.example.com/");
    await app.dispatcher.runOnce();
    expect(sent).toHaveLength(1);
    await app.dispatcher.runOnce();
    expect(sent).toHaveLength(1); // not due yet
    c.advance(5_000);
    await app.dispatcher.runOnce();
    expect(sent).toHaveLength(2);
    expect(sent[1]?.headers["webhook-id"]).toBe(sent[0]?.headers["webhook-id"]);
    expect(Number(sent[1]?.headers["webhook-timestamp"])).toBe(
      Number(sent[0]?.headers["webhook-timestamp"]) + 5,
    );

    const log = await client.listDeliveries({ spaceId, endpointId: endpoint?.id ?? "" });
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]?.attempts.map((x) => [x.responseStatus, x.error])).toEqual([
      [500, "HTTP 500"],
      [200, ""],
    ]);
    expect(log.deliveries[0]?.deliveredAt).toBeDefined();
    expect(
      (await client.getEndpoint({ spaceId, endpointId: endpoint?.id ?? "" })).endpoint?.failingSince,
    ).toBeUndefined();
  });

  it("gives up after a day of failures and disables the endpoint, with the reason", async () => {
    const c = clock();
    const { deliver, sent } = recording([503]);
    const { bus, client, app } = await start({ deliver, now: c.now });
    const spaceId = randomUUID();
    const { endpoint } = await endedEndpoint(client, spaceId, "https://down.example.com/");
    const endpointId = endpoint?.id ?? "";
    await publishEnded(bus, endedSession(spaceId));
    await waitFor("delivery", async () => (await pendingOf(endpointId)).length === 1);
    for (let i = 0; i < 40; i++) {
      await app.dispatcher.runOnce();
      const [row] = await pendingOf(endpointId);
      if (row?.status !== "pending") break;
      c.advance(Math.max(0, (row.next_attempt_at?.getTime() ?? 0) - c.now().getTime()));
    }
    const disabled = (await client.getEndpoint({ spaceId, endpointId })).endpoint;
    expect(disabled?.disabledAt).toBeDefined();
    expect(disabled?.disabledReason).toContain("HTTP 503");
    const [row] = await pendingOf(endpointId);
    expect(row?.status).toBe("failed");
    expect(sent.length).toBeGreaterThanOrEqual(10);
    expect(sent.length).toBeLessThanOrEqual(12);
    const spanMs =
      (Number(sent.at(-1)?.headers["webhook-timestamp"]) - Number(sent[0]?.headers["webhook-timestamp"])) *
      1000;
    expect(spanMs).toBeGreaterThanOrEqual(DAY - 1_000);
    // A disabled endpoint gets nothing more.
    await publishEnded(bus, endedSession(spaceId));
    await new Promise((r) => setTimeout(r, 100));
    c.advance(60_000);
    await app.dispatcher.runOnce();
    expect((await pendingOf(endpointId)).length).toBe(1);
  });

  it("records every attempt of an endpoint's deliveries failing at once, as the endpoint is disabled", async () => {
    // Every recording transaction is held once it has written its delivery, until all have (or 300 ms
    // have passed: a recording that waits for a lock another one holds may never get there). Whichever
    // disables the endpoint then updates its pending deliveries, the others' among them.
    const compiler = new PostgresQueryCompiler();
    const held = new WeakSet<object>();
    const gate = { armed: false, waiting: 0, expected: 0, open: () => {} };
    let opened = Promise.resolve();
    const arm = (expected: number) => {
      let open = () => {};
      opened = new Promise<void>((r) => (open = r));
      Object.assign(gate, { armed: true, waiting: 0, expected, open });
      setTimeout(open, 300).unref();
    };
    const db = t.db.withPlugin({
      transformQuery: ({ node, queryId }) => {
        const { sql } = compiler.compileQuery(node, queryId);
        if (gate.armed && /^update \S*"deliveries" set .* where "id" = \$\d+$/.test(sql)) held.add(queryId);
        return node;
      },
      transformResult: async ({ result, queryId }) => {
        if (held.has(queryId)) {
          if (++gate.waiting === gate.expected) gate.open();
          await opened;
        }
        return result;
      },
    });
    const c = clock();
    const { deliver, sent } = recording([503]);
    const env = { WEBHOOKS_DISABLE_AFTER_MS: "1000" };
    const { bus, client, app } = await start({ db, deliver, now: c.now, env });
    const spaceId = randomUUID();
    const { endpoint } = await endedEndpoint(client, spaceId, "https://flaky.example.com/");
    const endpointId = endpoint?.id ?? "";
    const n = 3; // below the test pool's 4 connections
    for (let i = 0; i < n; i++) await publishEnded(bus, endedSession(spaceId));
    await waitFor("the deliveries", async () => (await pendingOf(endpointId)).length === n);
    // All fail, failing since now. Each fan-out kicked the dispatcher: the run awaited here may be one
    // of those, so the attempts are counted where they arrived rather than by the run.
    await app.dispatcher.runOnce();
    expect(sent).toHaveLength(n);
    c.advance(5_000); // due again, and failing for longer than the endpoint may
    arm(n);
    expect(await app.dispatcher.runOnce()).toBe(n); // all fail again, recorded at once: disabled
    expect(sent).toHaveLength(2 * n);

    expect((await client.getEndpoint({ spaceId, endpointId })).endpoint?.disabledAt).toBeDefined();
    const deliveries = await pendingOf(endpointId);
    expect(deliveries.map((d) => [d.status, d.attempts, d.next_attempt_at])).toEqual(
      Array.from({ length: n }, () => ["failed", 2, null]),
    );
    const attempts = await t.db
      .selectFrom("delivery_attempts")
      .select(["delivery_id", "response_status"])
      .where(
        "delivery_id",
        "in",
        deliveries.map((d) => d.id),
      )
      .execute();
    expect(attempts).toHaveLength(2 * n);
    expect(attempts.every((a) => a.response_status === 503)).toBe(true);
  });

  it("announces a FULL session's transcript once it has settled", async () => {
    const { deliver, sent } = recording();
    const { bus, client, app } = await start({ deliver });
    const spaceId = randomUUID();
    await client.createEndpoint({
      spaceId,
      url: "https://t.example.com/",
      eventTypes: ["session.transcript_ready"],
    });
    const session = endedSession(spaceId);
    await publishEnded(bus, session);
    await waitFor(
      "check",
      async () =>
        (
          await t.db
            .selectFrom("transcript_checks")
            .selectAll()
            .where("session_id", "=", session.id)
            .execute()
        ).length === 1,
    );
    await app.dispatcher.runOnce();
    expect(sent.map((s) => JSON.parse(s.body))).toEqual([
      expect.objectContaining({
        type: "session.transcript_ready",
        data: expect.objectContaining({ session_id: session.id, entries: 2 }),
      }),
    ]);
  });
});

describe("cached endpoints", () => {
  /** t.db, noting the space of every load of a space's endpoints (subscribers.ts). */
  function countingLoads() {
    const compiler = new PostgresQueryCompiler();
    const loads: string[] = [];
    const db = t.db.withPlugin({
      transformQuery: ({ node, queryId }) => {
        const { sql, parameters } = compiler.compileQuery(node, queryId);
        if (/^select "id", "event_types" from \S*"endpoints"/.test(sql)) loads.push(String(parameters[0]));
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    return { db, loadsOf: (spaceId: string) => loads.filter((s) => s === spaceId).length };
  }

  /**
   * Every session.ended event published before has been handled: the service's one consumer takes them
   * in order, and a marker event published now has reached its own endpoint.
   */
  async function handled(bus: Bus, client: Awaited<ReturnType<typeof start>>["client"]) {
    await deliveryOfOneEvent(bus, client, "https://marker.example.com/");
  }

  it("loads a space without endpoints once: the next events make no query", async () => {
    const { db, loadsOf } = countingLoads();
    const { bus, client } = await start({ db, now: clock().now });
    const spaceId = randomUUID();
    // A FULL session's end asks twice (session.ended, then session.transcript_ready): one load.
    await publishEnded(bus, endedSession(spaceId));
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(loadsOf(spaceId)).toBe(1);
  });

  it("delivers the very next event to an endpoint created while the space's endpoints are cached", async () => {
    const { db, loadsOf } = countingLoads();
    const { bus, client } = await start({ db, now: clock().now });
    const spaceId = randomUUID();
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(loadsOf(spaceId)).toBe(1); // cached: nobody listens
    const { endpoint } = await endedEndpoint(client, spaceId, "https://new.example.com/");
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(await pendingOf(endpoint?.id ?? "")).toHaveLength(1);
  });

  it("stops delivering to a deleted endpoint at once", async () => {
    const { db, loadsOf } = countingLoads();
    const { bus, client } = await start({ db, now: clock().now });
    const spaceId = randomUUID();
    const { endpoint } = await endedEndpoint(client, spaceId, "https://gone.example.com/");
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(await pendingOf(endpoint?.id ?? "")).toHaveLength(1);
    const loaded = loadsOf(spaceId);
    await client.deleteEndpoint({ spaceId, endpointId: endpoint?.id ?? "" });
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    // Reloaded, so nothing was put in the outbox of the endpoint that is no more.
    expect(loadsOf(spaceId)).toBe(loaded + 1);
    expect(await pendingOf(endpoint?.id ?? "")).toHaveLength(0);
  });

  it("stops delivering to an endpoint the dispatcher disabled at once", async () => {
    const c = clock();
    const { deliver } = recording([503]);
    // Disabled after a second of failures: well within the cache's TTL.
    const env = { WEBHOOKS_DISABLE_AFTER_MS: "1000", WEBHOOKS_RETRY_FOR_MS: "1000" };
    const { bus, client, app } = await start({ deliver, now: c.now, env });
    const spaceId = randomUUID();
    const { endpoint } = await endedEndpoint(client, spaceId, "https://down.example.com/");
    const endpointId = endpoint?.id ?? "";
    await publishEnded(bus, endedSession(spaceId)); // caches the endpoint as enabled
    await handled(bus, client);
    await app.dispatcher.runOnce(); // fails: failing since now
    c.advance(1_000);
    await app.dispatcher.runOnce(); // fails again: disabled
    expect((await client.getEndpoint({ spaceId, endpointId })).endpoint?.disabledAt).toBeDefined();
    expect(SUBSCRIBERS_TTL_MS).toBeGreaterThan(1_000);
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect((await pendingOf(endpointId)).map((d) => d.status)).toEqual(["failed"]);
  });

  it("sees a change made behind the service's back (event types) once the TTL has run out", async () => {
    const c = clock();
    const { bus, client } = await start({ now: c.now });
    const spaceId = randomUUID();
    const { endpoint } = await client.createEndpoint({
      spaceId,
      url: "https://types.example.com/",
      eventTypes: ["memory.created"],
    });
    const endpointId = endpoint?.id ?? "";
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    await t.db
      .updateTable("endpoints")
      .set({ event_types: JSON.stringify(["session.ended"]) })
      .where("id", "=", endpointId)
      .execute();
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(await pendingOf(endpointId)).toHaveLength(0); // still cached
    c.advance(SUBSCRIBERS_TTL_MS);
    await publishEnded(bus, endedSession(spaceId));
    await handled(bus, client);
    expect(await pendingOf(endpointId)).toHaveLength(1);
  });

  it("drops a space's entry when another replica invalidates it", async () => {
    const bus = createMemoryBus({ logger: () => {} });
    const { db, loadsOf } = countingLoads();
    const frozen = () => 0; // entries never expire: only the invalidation can drop one
    const here = cachedSubscribers(db, bus, frozen);
    const there = cachedSubscribers(db, bus, frozen);
    try {
      const spaceId = randomUUID();
      expect(await here.of(spaceId, "session.ended")).toEqual([]);
      const id = randomUUID();
      await t.db
        .insertInto("endpoints")
        .values({
          id,
          space_id: spaceId,
          url: "https://elsewhere.example.com/",
          event_types: JSON.stringify(["session.ended"]),
          description: "",
          secret_sealed: "x",
          created_at: new Date(),
          disabled_reason: null,
        })
        .execute();
      expect(await here.of(spaceId, "session.ended")).toEqual([]);
      expect(loadsOf(spaceId)).toBe(1);
      there.changed(spaceId);
      await waitFor(
        "the invalidation",
        async () => (await here.of(spaceId, "session.ended")).length > 0,
        5_000,
      );
      expect(await here.of(spaceId, "session.ended")).toEqual([id]);
      expect(await here.of(spaceId, "memory.created")).toEqual([]);
    } finally {
      await here.close();
      await there.close();
      await bus.close();
    }
  });
});

describe("egress", () => {
  const strict = webhookEgressPolicy({}, false);
  const hookAt = (address: string) =>
    `http://${address.includes(":") && !address.startsWith("[") ? `[${address}]` : address}/hook`;

  it.each([
    ["10.1.2.3"],
    ["172.16.0.1"],
    ["192.168.1.1"],
    ["169.254.169.254"],
    ["100.64.0.1"],
    ["0.0.0.0"],
    ["::ffff:10.0.0.1"],
    ["fd00::1"],
    ["fe80::1"],
    ["127.0.0.1"],
    ["::1"],
    // IPv6 forms that carry an internal IPv4 address (the URL parser writes [::ffff:127.0.0.1] as the
    // hex form), IPv4-compatible, NAT64, 6to4 and Teredo.
    ["::ffff:7f00:1"],
    ["[::ffff:7f00:1]"],
    ["::ffff:a9fe:a9fe"],
    ["::127.0.0.1"],
    ["64:ff9b::a00:1"],
    ["2002:7f00:1::1"],
    ["2001::1"],
  ])("refuses %s", async (address) => {
    await expect(checkEgressTarget(hookAt(address), strict)).rejects.toThrow(EgressError);
  });

  it("judges a URL's host as the URL parser writes it", async () => {
    await expect(checkEgressTarget("http://[::ffff:127.0.0.1]:8080/hook", strict)).rejects.toThrow(
      EgressError,
    );
  });

  it("allows public addresses, and loopback only when the operator allows it", async () => {
    const loopbackAllowed = webhookEgressPolicy({}, true);
    await expect(checkEgressTarget(hookAt("93.184.216.34"), strict)).resolves.toHaveLength(1);
    await expect(checkEgressTarget(hookAt("2606:2800:220:1::1"), strict)).resolves.toHaveLength(1);
    await expect(checkEgressTarget(hookAt("127.0.0.1"), loopbackAllowed)).resolves.toHaveLength(1);
    await expect(checkEgressTarget(hookAt("::1"), loopbackAllowed)).resolves.toHaveLength(1);
    await expect(checkEgressTarget(hookAt("10.0.0.1"), loopbackAllowed)).rejects.toThrow(EgressError);
    // EGRESS_ALLOW reaches webhooks as it reaches every customer URL.
    const allowed = webhookEgressPolicy({ EGRESS_ALLOW: "10.9.0.0/16" }, false);
    await expect(checkEgressTarget(hookAt("10.9.1.1"), allowed)).resolves.toHaveLength(1);
  });

  it("refuses a name when any of its addresses is internal", async () => {
    const resolve = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    await expect(checkEgressTarget("http://mixed.example.com/hook", strict, resolve)).rejects.toThrow(
      EgressError,
    );
  });

  it("delivers nothing to a loopback receiver unless allowed; allowed, the receiver verifies it", async () => {
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    try {
      const refused = await httpDeliver({ fetch: createEgressFetch(strict), timeoutMs: 2_000 })(
        url,
        "{}",
        {},
      );
      expect(refused).toMatchObject({ refused: true });
      expect(received).toEqual([]);
      const viaName = await httpDeliver({ fetch: createEgressFetch(strict), timeoutMs: 2_000 })(
        url.replace("127.0.0.1", "localhost"),
        "{}",
        {},
      );
      expect(viaName).toMatchObject({ refused: true });
      expect(received).toEqual([]);

      // End to end through the service, allowed: a real signed POST.
      const { bus, client, app } = await start({ env: { WEBHOOKS_ALLOW_LOOPBACK: "true" } });
      const spaceId = randomUUID();
      const { secret } = await client.createEndpoint({ spaceId, url, eventTypes: ["session.ended"] });
      await publishEnded(bus, endedSession(spaceId));
      await waitFor("a request", async () => {
        await app.dispatcher.runOnce();
        return received.length > 0;
      });
      const got = received[0];
      const headers = Object.fromEntries(
        ["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(got?.headers[h])]),
      );
      expect(got?.headers["content-type"]).toBe("application/json");
      expect(await independentlyVerified(secret, headers, got?.body ?? "")).toBe(true);
      expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("records a refused target as a failed attempt naming why", async () => {
    const { bus, client, app } = await start();
    const { spaceId, endpoint } = await deliveryOfOneEvent(bus, client, "http://10.0.0.1/hook");
    await app.dispatcher.runOnce();
    const log = await client.listDeliveries({ spaceId, endpointId: endpoint?.id ?? "" });
    expect(log.deliveries[0]?.attempts[0]?.error).toContain("not a public address");
    expect(log.deliveries[0]?.attempts[0]?.responseStatus).toBe(0);
  });
});
