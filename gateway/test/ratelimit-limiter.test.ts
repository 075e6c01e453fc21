import { describe, expect, it } from "vitest";
import {
  type CounterStore,
  counterKey,
  MemoryCounterStore,
  type RateLimitDecision,
  RateLimiter,
  type RateLimiterOptions,
  rateLimitHeaders,
} from "../src/ratelimit/index.js";

/** A clock the test moves by hand; starts 250 ms into a window. */
function manualClock(startMs = 1_700_000_000_250) {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    set: (ms: number) => {
      nowMs = ms;
    },
    advance: (ms: number) => {
      nowMs += ms;
    },
  };
}

function recordingLogger() {
  const warnings: { message: string; fields: Record<string, unknown> }[] = [];
  return {
    warnings,
    warn: (message: string, fields: Record<string, unknown>) => warnings.push({ message, fields }),
  };
}

/** A store that counts its calls and behaves as `impl` says. */
function scriptedStore(impl: (key: string, windowId: number) => number | Promise<number>) {
  const store = {
    calls: 0,
    increment(key: string, windowId: number) {
      store.calls++;
      return impl(key, windowId);
    },
  };
  return store;
}

/** A store in memory that records the keys it is given. */
function keyRecordingStore() {
  const keys: string[] = [];
  const memory = new MemoryCounterStore();
  const store: CounterStore = {
    increment: (key, windowId) => {
      keys.push(key);
      return memory.increment(key, windowId);
    },
  };
  return { keys, store };
}

function limiterWith(overrides: Partial<RateLimiterOptions> = {}) {
  const clock = manualClock();
  const logger = recordingLogger();
  const limiter = new RateLimiter({ store: new MemoryCounterStore(), logger, now: clock.now, ...overrides });
  return { limiter, clock, logger };
}

const tokenEndpoint = { credential: "key-A", endpoint: "POST /v1/sessions/token", limit: 10 };

async function hits(limiter: RateLimiter, n: number, hit = tokenEndpoint): Promise<RateLimitDecision[]> {
  const out: RateLimitDecision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.hit(hit));
  return out;
}

describe("RateLimiter counting", () => {
  it("allows exactly the limit in one window and rejects the rest", async () => {
    const { limiter } = limiterWith();
    const decisions = await hits(limiter, 12);

    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0]);
    for (const d of decisions) {
      expect(d.limit).toBe(10);
      expect(d.resetSeconds).toBe(1);
      expect(d.failedOpen).toBe(false);
    }
  });

  it("produces X-RateLimit-* on every decision and Retry-After only on rejections", async () => {
    const { limiter } = limiterWith();
    const decisions = await hits(limiter, 12);

    expect(rateLimitHeaders(decisions[0] as RateLimitDecision)).toEqual({
      "X-RateLimit-Limit": "10",
      "X-RateLimit-Remaining": "9",
      "X-RateLimit-Reset": "1",
    });
    expect(rateLimitHeaders(decisions[9] as RateLimitDecision)).toEqual({
      "X-RateLimit-Limit": "10",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": "1",
    });
    for (const rejected of decisions.slice(10)) {
      expect(rateLimitHeaders(rejected)).toEqual({
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "1",
        "Retry-After": "1",
      });
    }
  });

  it("counts concurrent hits exactly", async () => {
    const { limiter } = limiterWith();
    const decisions = await Promise.all(Array.from({ length: 12 }, () => limiter.hit(tokenEndpoint)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.map((d) => d.remaining).sort((a, b) => b - a)).toEqual([
      9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0,
    ]);
  });

  it("starts a new window at the next wall-clock second, and reset is 1 anywhere in a window", async () => {
    const { limiter, clock } = limiterWith();
    const second = 1_700_000_001_000;
    clock.set(second);
    expect((await hits(limiter, 10)).every((d) => d.allowed && d.resetSeconds === 1)).toBe(true);

    clock.set(second + 999);
    const last = await limiter.hit(tokenEndpoint);
    expect(last).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });

    clock.set(second + 1000);
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ allowed: true, remaining: 9, resetSeconds: 1 });
  });

  it("keeps separate counters per endpoint and per credential", async () => {
    const { limiter } = limiterWith();
    const start = { credential: "token-1", endpoint: "POST /v1/sessions/start", limit: 5 };
    const stop = { ...start, endpoint: "POST /v1/sessions/stop" };
    const otherToken = { ...start, credential: "token-2" };

    expect((await hits(limiter, 6, start)).map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(await limiter.hit(stop)).toMatchObject({ allowed: true, remaining: 4, limit: 5 });
    expect(await limiter.hit(otherToken)).toMatchObject({ allowed: true, remaining: 4, limit: 5 });
  });

  it("does not confuse credential/endpoint pairs that concatenate alike", async () => {
    const { limiter } = limiterWith();
    await hits(limiter, 3, { credential: "ab", endpoint: "c", limit: 10 });
    expect(await limiter.hit({ credential: "a", endpoint: "bc", limit: 10 })).toMatchObject({ remaining: 9 });
  });

  it("never hands the raw credential to the store", async () => {
    const { keys, store } = keyRecordingStore();
    const { limiter } = limiterWith({ store });
    const secret = "sk_live_0123456789abcdef";
    await limiter.hit({ credential: secret, endpoint: "GET /v1/avatars", limit: 10 });

    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain(secret);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it("gives a pair the same key every time, also once more pairs came than it remembers", async () => {
    const { keys, store } = keyRecordingStore();
    const { limiter } = limiterWith({ store });
    const first = { credential: "key-first", endpoint: "POST /v1/sessions/token", limit: 100_000 };
    await limiter.hit(first);
    await limiter.hit(first);
    // More credentials than the limiter keeps keys for (10,000): it forgets them and makes them again.
    for (let i = 0; i < 10_050; i++) await limiter.hit({ ...first, credential: `key-${i}` });
    expect(await limiter.hit(first)).toMatchObject({ allowed: true, remaining: 100_000 - 3 });
    expect(keys.filter((k) => k === counterKey(first.credential, first.endpoint))).toHaveLength(3);
    expect(new Set(keys).size).toBe(10_051);
  });

  it("passes the wall-clock window id to the store", async () => {
    const windows: number[] = [];
    const store = scriptedStore(async (_key, windowId) => {
      windows.push(windowId);
      return 1;
    });
    const { limiter, clock } = limiterWith({ store });
    clock.set(1_700_000_123_999);
    await limiter.hit(tokenEndpoint);
    expect(windows).toEqual([1_700_000_123]);
  });

  it("rejects a limit that is not a positive integer", async () => {
    const { limiter } = limiterWith();
    await expect(limiter.hit({ ...tokenEndpoint, limit: 0 })).rejects.toThrow(RangeError);
    await expect(limiter.hit({ ...tokenEndpoint, limit: 2.5 })).rejects.toThrow(RangeError);
  });
});

describe("RateLimiter failing open", () => {
  it("allows the request and warns when the store throws", async () => {
    const store = scriptedStore(async () => {
      throw new Error("kv exploded");
    });
    const { limiter, logger } = limiterWith({ store });

    const decision = await limiter.hit(tokenEndpoint);

    expect(decision).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 1, failedOpen: true });
    expect(rateLimitHeaders(decision)).not.toHaveProperty("Retry-After");
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.fields).toMatchObject({
      reason: "error",
      lastStoreError: "kv exploded",
      uncheckedRequests: 1,
    });
  });

  it("also survives a store that throws synchronously", async () => {
    const store: CounterStore = {
      increment: () => {
        throw new Error("sync failure");
      },
    };
    const { limiter } = limiterWith({ store });
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ allowed: true, failedOpen: true });
  });

  it("bounds a store that never answers with the timeout", async () => {
    const store = scriptedStore(() => new Promise<number>(() => {}));
    const { limiter, logger } = limiterWith({ store, storeTimeoutMs: 20 });

    const decision = await limiter.hit(tokenEndpoint);

    expect(decision).toMatchObject({ allowed: true, failedOpen: true, remaining: 9, resetSeconds: 1 });
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.fields).toMatchObject({ reason: "timeout" });
  });

  it("swallows a store rejection that arrives after the timeout", async () => {
    let rejectLate: (err: Error) => void = () => {};
    const store = scriptedStore(
      () =>
        new Promise<number>((_, reject) => {
          rejectLate = reject;
        }),
    );
    const { limiter } = limiterWith({ store, storeTimeoutMs: 5 });

    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ allowed: true, failedOpen: true });
    rejectLate(new Error("too late"));
    // An unhandled rejection would fail this test run.
    await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it("skips the store during the cool-down after a failure, then tries it again", async () => {
    let healthy = false;
    const memory = new MemoryCounterStore();
    const store = scriptedStore(async (key, windowId) => {
      if (!healthy) throw new Error("down");
      return memory.increment(key, windowId);
    });
    const { limiter, clock } = limiterWith({ store, cooldownMs: 1000, failuresBeforeCooldown: 1 });

    await limiter.hit(tokenEndpoint);
    expect(store.calls).toBe(1);

    healthy = true;
    clock.advance(999);
    const skipped = await hits(limiter, 20);
    expect(store.calls).toBe(1);
    expect(skipped.every((d) => d.allowed && d.failedOpen)).toBe(true);

    clock.advance(1);
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({
      allowed: true,
      failedOpen: false,
      remaining: 9,
    });
    expect(store.calls).toBe(2);
  });

  it("re-enters the cool-down when the store is still failing after it", async () => {
    const store = scriptedStore(async () => {
      throw new Error("still down");
    });
    const { limiter, clock } = limiterWith({ store, cooldownMs: 1000, failuresBeforeCooldown: 1 });

    await limiter.hit(tokenEndpoint);
    clock.advance(1000);
    await limiter.hit(tokenEndpoint);
    clock.advance(500);
    await hits(limiter, 5);
    expect(store.calls).toBe(2);
  });

  it("cools down only after a run of failures; a success in between resets the run", async () => {
    let failing = true;
    const memory = new MemoryCounterStore();
    const store = scriptedStore(async (key, windowId) => {
      if (failing) throw new Error("slow or down");
      return memory.increment(key, windowId);
    });
    const { limiter } = limiterWith({ store, cooldownMs: 1000, failuresBeforeCooldown: 3 });

    await hits(limiter, 2);
    failing = false;
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ failedOpen: false });
    failing = true;
    await hits(limiter, 2);
    expect(store.calls).toBe(5);
    await hits(limiter, 1);
    expect(store.calls).toBe(6);
    // Three failures in a row: the store rests for the cool-down.
    await hits(limiter, 4);
    expect(store.calls).toBe(6);
  });

  it("skips the store at once while isAvailable says it is down", async () => {
    let connected = false;
    const memory = new MemoryCounterStore();
    const store = scriptedStore((key, windowId) => memory.increment(key, windowId));
    const { limiter, logger } = limiterWith({ store, isAvailable: () => connected });

    const decisions = await hits(limiter, 15);
    expect(store.calls).toBe(0);
    expect(decisions.every((d) => d.allowed && d.failedOpen)).toBe(true);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.fields).toMatchObject({ reason: "unavailable" });

    connected = true;
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ failedOpen: false, remaining: 9 });
    expect(store.calls).toBe(1);
  });

  it("treats a throwing isAvailable as unavailable", async () => {
    const store = scriptedStore(async () => 1);
    const { limiter } = limiterWith({
      store,
      isAvailable: () => {
        throw new Error("status broke");
      },
    });
    expect(await limiter.hit(tokenEndpoint)).toMatchObject({ allowed: true, failedOpen: true });
    expect(store.calls).toBe(0);
  });

  it("warns at most once per interval and counts the unchecked requests in between", async () => {
    const store = scriptedStore(async () => {
      throw new Error("down");
    });
    const { limiter, clock, logger } = limiterWith({ store, cooldownMs: 1000, warnIntervalMs: 5000 });

    // 1 failure + 19 cool-down skips, all within the first second.
    await hits(limiter, 20);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.fields).toMatchObject({ uncheckedRequests: 1 });

    // Keep failing once per second for the rest of the interval: no new warning.
    for (let s = 1; s < 5; s++) {
      clock.advance(1000);
      await hits(limiter, 3);
    }
    expect(logger.warnings).toHaveLength(1);

    // The interval has passed (5000 ms after the first warning): one warning covering all since the last.
    clock.advance(1000);
    await limiter.hit(tokenEndpoint);
    expect(logger.warnings).toHaveLength(2);
    expect(logger.warnings[1]?.fields).toMatchObject({ uncheckedRequests: 19 + 4 * 3 + 1 });
  });
});
