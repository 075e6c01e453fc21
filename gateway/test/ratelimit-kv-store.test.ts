import {
  type Bus,
  createMemoryBus,
  KvConflictError,
  type KvEntry,
  type KvOptions,
  type KvStore,
} from "@avatar/bus";
import { describe, expect, it } from "vitest";
import {
  KvCounterContentionError,
  KvCounterStore,
  kvKeyFor,
  openKvCounterStore,
  RateLimiter,
} from "../src/ratelimit/index.js";

/**
 * A KvStore that honours compare-and-set and yields to the event loop inside every call, so concurrent
 * callers interleave the way they would against a server.
 * Used where a test needs to reach inside a store (fault injection); exactness runs on the memory bus's
 * KV here and on real NATS in suite/test/separate-processes.test.ts.
 */
class CasKvStore implements KvStore {
  readonly entries = new Map<string, KvEntry>();
  conflicts = 0;
  #revision = 0;

  async get(key: string): Promise<KvEntry | null> {
    await yieldToLoop();
    return this.entries.get(key) ?? null;
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    await yieldToLoop();
    if (this.entries.has(key)) return this.#conflict(key);
    return this.#write(key, value);
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    await yieldToLoop();
    if (this.entries.get(key)?.revision !== expectedRevision) return this.#conflict(key);
    return this.#write(key, value);
  }

  async put(key: string, value: Uint8Array): Promise<number> {
    await yieldToLoop();
    return this.#write(key, value);
  }

  async delete(key: string): Promise<void> {
    await yieldToLoop();
    this.entries.delete(key);
  }

  #write(key: string, value: Uint8Array): number {
    assertKvSafe(key);
    this.#revision++;
    this.entries.set(key, { value, revision: this.#revision });
    return this.#revision;
  }

  #conflict(key: string): never {
    this.conflicts++;
    throw new KvConflictError("ratelimit", key);
  }
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function assertKvSafe(key: string): void {
  if (!/^[A-Za-z0-9_=/.-]+$/.test(key) || key.startsWith(".") || key.endsWith(".") || key.includes("..")) {
    throw new Error(`not a valid KV key: ${key}`);
  }
}

const decode = (value: Uint8Array) => new TextDecoder().decode(value);

describe("KvCounterStore", () => {
  it("counts up per key and starts again in the next window", async () => {
    const store = new KvCounterStore(new CasKvStore());
    expect(await store.increment("k1", 7)).toBe(1);
    expect(await store.increment("k1", 7)).toBe(2);
    expect(await store.increment("k1", 7)).toBe(3);
    expect(await store.increment("k2", 7)).toBe(1);
    expect(await store.increment("k1", 8)).toBe(1);
  });

  it("counts 50 concurrent increments from five replicas exactly: 1..50, each once", async () => {
    const kv = countingKv(await createMemoryBus().kv("ratelimit"));
    const replicas = Array.from({ length: 5 }, () => new KvCounterStore(kv));

    const counts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => replicas[i % 5]?.increment("hot", 42) ?? Promise.reject()),
    );

    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(decode((await kv.get(kvKeyFor("hot", 42)))?.value ?? new Uint8Array())).toBe("50");
    // The replicas really raced; otherwise this test would prove nothing about compare-and-set.
    expect(kv.conflicts).toBeGreaterThan(0);
  });

  it("adds a burst on one key in a few writes instead of one per hit", async () => {
    const kv = countingKv(await createMemoryBus().kv("ratelimit"));
    const store = new KvCounterStore(kv);
    const counts = await Promise.all(Array.from({ length: 50 }, () => store.increment("burst", 7)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(kv.writes).toBeLessThanOrEqual(3);
    expect(kv.conflicts).toBe(0);
  });

  it("builds KV-safe keys, hashing a key that is not one safe token", () => {
    expect(kvKeyFor("abc123", 1_700_000_000)).toBe("abc123.1700000000");
    const hashed = kvKeyFor("POST /v1/sessions/token key:with spaces", 5);
    expect(hashed).toMatch(/^[0-9a-f]{64}\.5$/);
    expect(kvKeyFor("a.b", 5)).not.toBe("a.b.5");
  });

  it("passes errors other than conflicts through", async () => {
    const kv = new CasKvStore();
    kv.create = async () => {
      throw new Error("connection lost");
    };
    await expect(new KvCounterStore(kv).increment("k", 1)).rejects.toThrow("connection lost");
  });

  it("gives up after a bounded number of conflicts", async () => {
    const kv = new CasKvStore();
    await kv.put(kvKeyFor("k", 1), new TextEncoder().encode("3"));
    let updates = 0;
    kv.update = async (key) => {
      updates++;
      throw new KvConflictError("ratelimit", key);
    };
    await expect(new KvCounterStore(kv, { maxAttempts: 5 }).increment("k", 1)).rejects.toThrow(
      KvCounterContentionError,
    );
    // The first attempt creates (the key exists: a conflict), the four others update after a read.
    expect(kv.conflicts).toBe(1);
    expect(updates).toBe(4);
  });

  it("writes once per hit and reads only after another replica wrote the key", async () => {
    const kv = countingKv(new CasKvStore());
    let reads = 0;
    const counting = {
      ...kv,
      get: (key: string) => {
        reads++;
        return kv.get(key);
      },
    };
    const mine = new KvCounterStore(counting);
    expect(await mine.increment("k", 9)).toBe(1);
    expect(await mine.increment("k", 9)).toBe(2);
    expect(reads).toBe(0);
    expect(kv.writes).toBe(2);
    expect(await new KvCounterStore(counting).increment("k", 9)).toBe(3);
    expect(await mine.increment("k", 9)).toBe(4);
    expect(reads).toBe(2);
    expect(kv.conflicts).toBe(2);
  });

  it("rejects a corrupt stored value instead of counting from it", async () => {
    const kv = new CasKvStore();
    await kv.put(kvKeyFor("k", 1), new TextEncoder().encode("banana"));
    await expect(new KvCounterStore(kv).increment("k", 1)).rejects.toThrow(/invalid value/);
  });

  it("openKvCounterStore opens the ratelimit bucket with a short TTL", async () => {
    const opened: { bucket: string; options: KvOptions | undefined }[] = [];
    const kv = new CasKvStore();
    const bus = {
      kv: async (bucket: string, options?: KvOptions) => {
        opened.push({ bucket, options });
        return kv;
      },
    } as unknown as Bus;

    const store = await openKvCounterStore(bus);

    expect(opened).toEqual([{ bucket: "ratelimit", options: { ttlMs: 10_000 } }]);
    expect(await store.increment("k", 1)).toBe(1);
  });

  it("lets two replicas sharing the bucket admit exactly the limit between them", async () => {
    const kv = new CasKvStore();
    const now = () => 1_700_000_000_500;
    const logger = { warn: () => {} };
    // A generous timeout: this test is about exactness, not latency.
    const replicas = [0, 1].map(
      () => new RateLimiter({ store: new KvCounterStore(kv), logger, now, storeTimeoutMs: 10_000 }),
    );
    const hit = { credential: "key-A", endpoint: "POST /v1/sessions/token", limit: 10 };

    const decisions = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (replicas[i % 2] as RateLimiter).hit(hit)),
    );

    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.every((d) => !d.failedOpen)).toBe(true);
  });
});

/** Counts the writes and conflicts a real KvStore sees. */
function countingKv(inner: KvStore): KvStore & { writes: number; conflicts: number } {
  const counted = {
    writes: 0,
    conflicts: 0,
    get: (key: string) => inner.get(key),
    put: (key: string, value: Uint8Array) => inner.put(key, value),
    delete: (key: string) => inner.delete(key),
    create: (key: string, value: Uint8Array) => track(() => inner.create(key, value)),
    update: (key: string, value: Uint8Array, rev: number) => track(() => inner.update(key, value, rev)),
  };
  async function track(write: () => Promise<number>): Promise<number> {
    counted.writes++;
    try {
      return await write();
    } catch (err) {
      if (err instanceof KvConflictError) counted.conflicts++;
      throw err;
    }
  }
  return counted;
}
