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
  LEASE_SHARE_OF_LIMIT,
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

/** A limit under 64, so that every hit is counted on its own (its lease share is under two numbers). */
const EXACT = 50;

describe("KvCounterStore", () => {
  it("counts up per key and starts again in the next window", async () => {
    const store = new KvCounterStore(new CasKvStore());
    expect(await store.increment("k1", 7, EXACT)).toBe(1);
    expect(await store.increment("k1", 7, EXACT)).toBe(2);
    expect(await store.increment("k1", 7, EXACT)).toBe(3);
    expect(await store.increment("k2", 7, EXACT)).toBe(1);
    expect(await store.increment("k1", 8, EXACT)).toBe(1);
  });

  it("counts 50 concurrent increments from five replicas exactly: 1..50, each once", async () => {
    const kv = countingKv(await createMemoryBus().kv("ratelimit"));
    const replicas = Array.from({ length: 5 }, () => new KvCounterStore(kv));

    const counts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => replicas[i % 5]?.increment("hot", 42, EXACT) ?? Promise.reject()),
    );

    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(decode((await kv.get(kvKeyFor("hot", 42)))?.value ?? new Uint8Array())).toBe("50");
    // The replicas really raced; otherwise this test would prove nothing about compare-and-set.
    expect(kv.conflicts).toBeGreaterThan(0);
  });

  it("adds a burst on one key in a few writes instead of one per hit", async () => {
    const kv = countingKv(await createMemoryBus().kv("ratelimit"));
    const store = new KvCounterStore(kv);
    const counts = await Promise.all(Array.from({ length: 50 }, () => store.increment("burst", 7, EXACT)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(kv.writes).toBeLessThanOrEqual(3);
    expect(kv.conflicts).toBe(0);
  });

  it("takes a steady stream's numbers in growing leases: each number once, most hits answered at once", async () => {
    const kv = countingKv(new CasKvStore());
    const store = new KvCounterStore(kv);
    const counts: number[] = [];
    let answeredAtOnce = 0;
    for (let i = 0; i < 1000; i++) {
      const answer = store.increment("stream", 7, 1_000_000);
      if (typeof answer === "number") answeredAtOnce++;
      counts.push(await answer);
    }
    expect(counts).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    // Leases of 1, 2, 4, ... 512: ten writes for 1,023 numbers.
    expect(kv.writes).toBe(10);
    expect(answeredAtOnce).toBe(990);
    expect(decode((await kv.get(kvKeyFor("stream", 7)))?.value ?? new Uint8Array())).toBe("1023");
  });

  it("lets replicas that keep getting hits admit exactly the limit, leases and all", async () => {
    const kv = new CasKvStore();
    const replicas = Array.from({ length: 4 }, () => new KvCounterStore(kv));
    const limit = 320;
    let admitted = 0;
    for (let round = 0; round < 150; round++) {
      const counts = await Promise.all(replicas.map((r) => r.increment("shared", 3, limit)));
      admitted += counts.filter((c) => c <= limit).length;
    }
    expect(admitted).toBe(limit);
  });

  it("holds back at most its share of the limit when its hits stop", async () => {
    const kv = countingKv(new CasKvStore());
    const [quiet, busy] = [new KvCounterStore(kv), new KvCounterStore(kv)] as const;
    const limit = 320;
    const share = limit * LEASE_SHARE_OF_LIMIT;
    for (let i = 0; i < 100; i++) await quiet.increment("shared", 3, limit);
    let admittedByBusy = 0;
    while ((await busy.increment("shared", 3, limit)) <= limit) admittedByBusy++;
    // What the quiet replica leased and never handed out is all that was lost.
    expect(admittedByBusy).toBeGreaterThanOrEqual(limit - 100 - share);
    expect(admittedByBusy).toBeLessThanOrEqual(limit - 100);
    expect(admittedByBusy).toBeGreaterThan(0);
  });

  it("rejects a key's hits past the limit without writing again", async () => {
    const kv = countingKv(new CasKvStore());
    const store = new KvCounterStore(kv);
    for (let i = 1; i <= 5; i++) expect(await store.increment("k", 4, 5)).toBe(i);
    const writes = kv.writes;
    for (let i = 0; i < 20; i++) {
      const answer = store.increment("k", 4, 5);
      expect(typeof answer).toBe("number");
      expect(answer).toBeGreaterThan(5);
    }
    expect(kv.writes).toBe(writes);
    // The next window counts from one again, hit by hit.
    expect(await store.increment("k", 5, 5)).toBe(1);
    expect(kv.writes).toBe(writes + 1);
  });

  it("starts every window with a lease of only the waiting hits", async () => {
    const kv = countingKv(new CasKvStore());
    const store = new KvCounterStore(kv);
    for (let i = 0; i < 100; i++) await store.increment("k", 1, 1_000_000);
    expect(await store.increment("k", 2, 1_000_000)).toBe(1);
    expect(decode((await kv.get(kvKeyFor("k", 2)))?.value ?? new Uint8Array())).toBe("1");
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
    await expect(new KvCounterStore(kv).increment("k", 1, EXACT)).rejects.toThrow("connection lost");
  });

  it("gives up after a bounded number of conflicts", async () => {
    const kv = new CasKvStore();
    await kv.put(kvKeyFor("k", 1), new TextEncoder().encode("3"));
    let updates = 0;
    kv.update = async (key) => {
      updates++;
      throw new KvConflictError("ratelimit", key);
    };
    await expect(new KvCounterStore(kv, { maxAttempts: 5 }).increment("k", 1, EXACT)).rejects.toThrow(
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
    expect(await mine.increment("k", 9, EXACT)).toBe(1);
    expect(await mine.increment("k", 9, EXACT)).toBe(2);
    expect(reads).toBe(0);
    expect(kv.writes).toBe(2);
    expect(await new KvCounterStore(counting).increment("k", 9, EXACT)).toBe(3);
    expect(await mine.increment("k", 9, EXACT)).toBe(4);
    expect(reads).toBe(2);
    expect(kv.conflicts).toBe(2);
  });

  it("rejects a corrupt stored value instead of counting from it", async () => {
    const kv = new CasKvStore();
    await kv.put(kvKeyFor("k", 1), new TextEncoder().encode("banana"));
    await expect(new KvCounterStore(kv).increment("k", 1, EXACT)).rejects.toThrow(/invalid value/);
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
    expect(await store.increment("k", 1, EXACT)).toBe(1);
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
