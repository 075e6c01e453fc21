import { type CounterStore, readGatewayConfig } from "@avatar/gateway";
import { createLogger } from "@avatar/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";
import { ADA, TOKEN_PATH } from "./token-support.js";

/** The interface's Limits section through the public gateway. */

let suite: TestSuite;

beforeAll(async () => {
  suite = await startTestSuite();
});
afterAll(async () => {
  await suite?.stop();
});

async function burst(n: number, path: string, headers?: Record<string, string>): Promise<Response[]> {
  await atNextSecond();
  return Promise.all(Array.from({ length: n }, () => suite.get(path, headers)));
}

describe("fixed one-second windows", () => {
  it("answers exactly 10 of 12 requests on one endpoint with one key, and 429 the rest with the headers", async () => {
    const responses = await burst(12, "/v1/voices", { "X-API-KEY": suite.apiKey });
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(2);
    for (const r of responses) {
      expect(r.headers.get("x-ratelimit-limit")).toBe("10");
      expect(r.headers.get("x-ratelimit-reset")).toBe("1");
    }
    expect(ok.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    for (const r of limited) {
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(await json(r)).toEqual({ code: 4290, data: null, message: "Rate limit exceeded" });
    }
    expect(ok.every((r) => r.headers.get("retry-after") === null)).toBe(true);
  });

  it("opens a new window at the next second", async () => {
    await burst(11, "/v1/avatars", { "X-API-KEY": suite.apiKey });
    const after = await burst(1, "/v1/avatars", { "X-API-KEY": suite.apiKey });
    expect(after[0]?.status).toBe(200);
    expect(after[0]?.headers.get("x-ratelimit-remaining")).toBe("9");
  });

  it("counts each endpoint separately, and path parameters do not split a counter", async () => {
    const headers = { "X-API-KEY": suite.apiKey };
    await atNextSecond();
    const ids = ["0b3c3b2e-6c25-4f5e-9d0e-2b2f1a8f4c11", "7d1f0c9a-2e3b-4c5d-8e9f-0a1b2c3d4e5f"];
    const byId = await Promise.all(
      Array.from({ length: 11 }, (_, i) => suite.get(`/v1/voices/${ids[i % 2]}`, headers)),
    );
    expect(byId.filter((r) => r.status === 429)).toHaveLength(1);
    expect(byId.filter((r) => r.status === 404)).toHaveLength(10);
    const other = await suite.get("/v1/avatars/public");
    expect(other.status).toBe(200);
  });

  it("gives two keys of one space independent budgets", async () => {
    const second = await suite.clients.tokens.createApiKey({ spaceId: suite.spaceId, name: "second" });
    await atNextSecond();
    const [a, b] = await Promise.all([
      Promise.all(Array.from({ length: 11 }, () => suite.get("/v1/avatars", { "X-API-KEY": suite.apiKey }))),
      Promise.all(
        Array.from({ length: 10 }, () => suite.get("/v1/avatars", { "X-API-KEY": second.apiKeySecret })),
      ),
    ]);
    expect(a.filter((r) => r.status === 429)).toHaveLength(1);
    expect(b.every((r) => r.status === 200)).toBe(true);
  });

  it("counts requests without a credential per client IP", async () => {
    const responses = await burst(12, "/v1/languages");
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(2);
  });

  it("decides 429 before authentication: an unknown key is limited too", async () => {
    const responses = await burst(12, "/v1/avatars", {
      "X-API-KEY": "lak_unknown_key_0000000000000000000000",
    });
    expect(responses.filter((r) => r.status === 401)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(2);
  });
});

describe("fail-open", () => {
  it("lets every request through, with no 5xx, when the counter store fails, and warns", async () => {
    const lines: string[] = [];
    const failing: CounterStore = { increment: async () => Promise.reject(new Error("store down")) };
    const broken = await startTestSuite({
      log: createLogger({ sink: (l) => lines.push(l) }),
      overrides: { rateLimitStore: failing },
    });
    try {
      await atNextSecond();
      const responses = await Promise.all(
        Array.from({ length: 15 }, () => broken.get("/v1/avatars", { "X-API-KEY": broken.apiKey })),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(15).fill(200));
      const warnings = lines
        .map((l) => JSON.parse(l))
        .filter((l) => l.level === "warn" && /rate limit/i.test(l.msg));
      expect(warnings.length).toBeGreaterThanOrEqual(1);
    } finally {
      await broken.stop();
    }
  });

  it("lets requests through when the store never answers, bounded by the store timeout", async () => {
    const hanging: CounterStore = { increment: () => new Promise<number>(() => {}) };
    const slow = await startTestSuite({
      overrides: { rateLimitStore: hanging },
      env: { RATE_LIMIT_STORE_TIMEOUT_MS: "30" },
    });
    try {
      const responses = await Promise.all(Array.from({ length: 12 }, () => slow.get("/v1/languages")));
      expect(responses.every((r) => r.status === 200)).toBe(true);
    } finally {
      await slow.stop();
    }
  });
});

describe("RATE_LIMIT_PER_SECOND", () => {
  it("grants more requests per key and endpoint; the session lifecycle keeps 5 per session token", async () => {
    const generous = await startTestSuite({ env: { RATE_LIMIT_PER_SECOND: "25" } });
    try {
      const headers = { "X-API-KEY": generous.apiKey };
      await atNextSecond();
      const responses = await Promise.all(
        Array.from({ length: 27 }, () => generous.get("/v1/avatars", headers)),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(25);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(2);
      expect(responses[0]?.headers.get("x-ratelimit-limit")).toBe("25");

      const minted = await generous.request("POST", TOKEN_PATH, { headers, body: { avatar_id: ADA.id } });
      const bearer = { Authorization: `Bearer ${(await json(minted)).data.session_token}` };
      await atNextSecond();
      const keepAlives = await Promise.all(
        Array.from({ length: 6 }, () =>
          generous.request("POST", "/v1/sessions/keep-alive", { headers: bearer, body: {} }),
        ),
      );
      expect(keepAlives.filter((r) => r.status === 429)).toHaveLength(1);
      expect(keepAlives[0]?.headers.get("x-ratelimit-limit")).toBe("5");
    } finally {
      await generous.stop();
    }
  });

  it("refuses a limit below 1 at start", () => {
    expect(() => readGatewayConfig({ RATE_LIMIT_PER_SECOND: "0" })).toThrow(/RATE_LIMIT_PER_SECOND/);
  });
});
