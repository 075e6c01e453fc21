import { type RunningGateway, readGatewayConfig, startGateway } from "@avatar/gateway";
import { createLogger } from "@avatar/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ADA, key } from "./sessions-support.js";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 3 of the security review: the limiter keyed on whatever X-API-KEY or bearer string arrived,
 * before checking it, so random values bought unlimited budget (embed endpoint, WebSocket upgrade), and
 * 1,000 invalid keys reached the tokens service in 2.3 s. Now only verified credentials get a bucket of
 * their own; anything else counts against the client IP, whose failed authentications have a budget.
 */

let suite: TestSuite;
let counted: RunningGateway;
let lookups = 0;
const gatewayLog: string[] = [];

beforeAll(async () => {
  suite = await startTestSuite();
  // A second gateway on the same services whose tokens client counts the API-key lookups it makes.
  const tokens = suite.clients.tokens;
  const countingTokens = new Proxy(tokens, {
    get(target, name, receiver) {
      if (name !== "authenticateApiKey") return Reflect.get(target, name, receiver);
      return (...args: Parameters<typeof tokens.authenticateApiKey>) => {
        lookups++;
        return tokens.authenticateApiKey(...args);
      };
    },
  });
  counted = await startGateway({
    clients: new Proxy(suite.clients, {
      get: (target, name, receiver) =>
        name === "tokens" ? countingTokens : Reflect.get(target, name, receiver),
    }),
    bus: suite.bus,
    log: createLogger({ level: "warn", sink: (line) => gatewayLog.push(line) }),
    config: readGatewayConfig({ RATE_LIMIT_STORE_TIMEOUT_MS: "2000" }),
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(async () => {
  await counted?.close();
  await suite?.stop();
});

const junk = () => ({ "X-API-KEY": `lak_${crypto.randomUUID()}` });
/**
 * Sends `n` requests at once at the start of a window and answers their statuses and how many
 * one-second windows they were counted in (checking credentials first can spread a burst over two on a
 * loaded machine). One bucket per IP lets `limit` through per window; a bucket per junk key let all.
 */
async function burst(n: number, send: () => Promise<number>) {
  await send(); // warm the connections and caches up: the burst itself then fits a window
  await atNextSecond();
  const started = Date.now();
  const codes = await Promise.all(Array.from({ length: n }, send));
  const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
  return { codes, windows, count: (status: number) => codes.filter((c) => c === status).length };
}

describe("junk credentials count against the client IP", () => {
  it("fifteen random API keys in one second share one bucket: 10 answered (401), 5 limited", async () => {
    const b = await burst(15, async () => (await suite.get("/v1/voices", junk())).status);
    expect(b.count(401)).toBeLessThanOrEqual(10 * b.windows);
    expect(b.count(429)).toBeGreaterThanOrEqual(15 - 10 * b.windows);
    expect(b.count(401) + b.count(429)).toBe(15);
    if (b.windows === 1) expect(b.count(401)).toBe(10);
  });

  it("random bearer tokens too (session-token endpoints)", async () => {
    const b = await burst(
      8,
      async () =>
        (
          await suite.request("POST", "/v1/sessions/keep-alive", {
            headers: { Authorization: `Bearer junk.${crypto.randomUUID()}.x` },
          })
        ).status,
    );
    expect(b.count(401)).toBeLessThanOrEqual(5 * b.windows);
    expect(b.count(429)).toBeGreaterThanOrEqual(8 - 5 * b.windows);
  });

  it("the embed endpoint takes no credential: junk headers buy nothing, 10 per IP", async () => {
    const created = await suite.request("POST", "/v2/embeddings", {
      headers: key(suite.apiKey),
      body: { avatar_id: ADA, is_sandbox: true, max_sessions_per_hour: 1000, max_concurrent_sessions: 1000 },
    });
    const { embed_id } = (await json(created)).data;
    await atNextSecond();
    const responses = await Promise.all(
      Array.from({ length: 14 }, () =>
        suite.request("POST", `/embed/${embed_id}/session`, { headers: junk() }),
      ),
    );
    expect(responses.filter((r) => r.status === 429)).toHaveLength(4);
  });

  it("the WebSocket upgrade takes a ticket, not a key: junk keys are counted per IP", async () => {
    const wsUrl = `${suite.gatewayUrl.replace("http", "ws")}/v1/sessions/ws?ticket=nope`;
    const b = await burst(
      13,
      () =>
        new Promise<number>((resolve) => {
          const ws = new WebSocket(wsUrl, { headers: junk() });
          ws.once("unexpected-response", (_req, res) => {
            resolve(res.statusCode ?? 0);
            res.resume();
          });
          ws.once("error", () => resolve(-1));
        }),
    );
    expect(b.count(429)).toBeGreaterThanOrEqual(13 - 10 * b.windows);
    expect(b.count(401)).toBeLessThanOrEqual(10 * b.windows);
  });

  it("a verified key keeps its own budget while junk from the same IP is limited", async () => {
    await suite.get("/v1/voices", key(suite.apiKey));
    await atNextSecond();
    const [mixed, own] = await Promise.all([
      Promise.all(Array.from({ length: 12 }, () => suite.get("/v1/voices", junk()))),
      Promise.all(Array.from({ length: 10 }, () => suite.get("/v1/voices", key(suite.apiKey)))),
    ]);
    expect(own.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(mixed.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(2);
  });
});

describe("the failed-auth budget per IP", () => {
  it("1,000 invalid keys spread over every API-key route do not reach the tokens service at line rate", async () => {
    const paths = [
      "/v1/voices",
      "/v1/avatars",
      "/v1/contexts",
      "/v1/secrets",
      "/v1/voice_agents",
      "/v1/memory",
    ];
    const paths2 = ["/v1/llm-configurations", "/v1/sessions", "/v1/users/credits", "/v1/avatars/public"];
    const all = [...paths, ...paths2.slice(0, 3)];
    await atNextSecond();
    lookups = 0;
    const started = Date.now();
    const codes: number[] = [];
    for (let i = 0; i < 1000; i += 100) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          fetch(`${counted.url}${all[(i + j) % all.length]}`, { headers: junk() }).then((r) => r.status),
        ),
      );
      codes.push(...batch);
    }
    const seconds = Math.ceil((Date.now() - started) / 1000);
    // At most the budget (10) per one-second window reached the tokens service.
    expect(lookups).toBeLessThanOrEqual(10 * (seconds + 1));
    expect(codes.every((c) => c === 401 || c === 429)).toBe(true);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThan(800);
    // A valid key that this gateway has not seen yet is looked up again once the window has passed.
    await atNextSecond();
    const res = await fetch(`${counted.url}/v1/voices`, { headers: key(suite.apiKey) });
    expect(res.status, gatewayLog.join("\n")).toBe(200);
  });
});
