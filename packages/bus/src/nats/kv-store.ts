/**
 * A NATS KV bucket behind the KvStore interface: memory storage, one value per key, bucket-wide TTL.
 * Every operation is bounded by `timeoutMs`. A bucket that vanished (memory storage does not survive a
 * NATS restart) is created again and the operation retried once.
 */
import { type JetStreamManager, StorageType } from "@nats-io/jetstream";
import type { KV, Kvm } from "@nats-io/kv";
import { nanos } from "@nats-io/transport-node";
import { KvConflictError, type KvEntry, type KvStore, RequestTimeoutError } from "../bus.js";
import { DEDUPE_WINDOW_MS } from "../durable-settings.js";
import { assertExpectedRevision, assertKey } from "../kv-names.js";
import { isMissingStream, isWrongLastSequence } from "./errors.js";
import { bounded } from "./timeout.js";

export interface NatsKvDeps {
  kvm: Kvm;
  jsm: JetStreamManager;
  timeoutMs: number;
  assertUsable(): void;
}

/** Opens (creating if needed) the bucket and aligns its TTL with `ttlMs`. */
async function openBucket(deps: NatsKvDeps, bucket: string, ttlMs: number | undefined): Promise<KV> {
  const kv = await deps.kvm.create(bucket, {
    storage: StorageType.Memory,
    history: 1,
    ttl: ttlMs ?? 0,
    // Plain (non-direct) gets answer "stream not found" when the bucket is gone, instead of timing out.
    allow_direct: false,
  });
  const stream = `KV_${bucket}`;
  const { config } = await deps.jsm.streams.info(stream);
  const maxAge = ttlMs ? nanos(ttlMs) : 0;
  if (config.max_age !== maxAge) {
    const duplicateWindow = nanos(ttlMs ? Math.min(ttlMs, DEDUPE_WINDOW_MS) : DEDUPE_WINDOW_MS);
    await deps.jsm.streams.update(stream, { ...config, max_age: maxAge, duplicate_window: duplicateWindow });
  }
  return kv;
}

export async function openNatsKvStore(
  deps: NatsKvDeps,
  bucket: string,
  ttlMs: number | undefined,
): Promise<KvStore> {
  const within = <T>(what: string, work: () => Promise<T>): Promise<T> =>
    bounded(work, deps.timeoutMs, () => new RequestTimeoutError(`kv ${bucket}/${what}`, deps.timeoutMs));
  let kv = await within("open", () => openBucket(deps, bucket, ttlMs));

  const op = async <T>(key: string, fn: (kv: KV) => Promise<T>): Promise<T> => {
    deps.assertUsable();
    assertKey(key);
    const attempt = async () => {
      try {
        return await fn(kv);
      } catch (err) {
        if (!isMissingStream(err)) throw err;
        kv = await openBucket(deps, bucket, ttlMs);
        return fn(kv);
      }
    };
    return within(key, attempt);
  };
  const compareAndSet = async (key: string, fn: (kv: KV) => Promise<number>) => {
    try {
      return await op(key, fn);
    } catch (err) {
      throw isWrongLastSequence(err) ? new KvConflictError(bucket, key) : err;
    }
  };

  return {
    async get(key): Promise<KvEntry | null> {
      const entry = await op(key, (b) => b.get(key));
      return entry && entry.operation === "PUT" ? { value: entry.value, revision: entry.revision } : null;
    },
    create: (key, value) => compareAndSet(key, (b) => b.create(key, value)),
    update: async (key, value, expectedRevision) => {
      assertExpectedRevision(expectedRevision);
      return compareAndSet(key, (b) => b.update(key, value, expectedRevision));
    },
    put: (key, value) => op(key, (b) => b.put(key, value)),
    delete: (key) => op(key, (b) => b.delete(key)),
  };
}
