import { type Bus, KvConflictError, type KvStore } from "@avatar/bus";
import { sha256Hex } from "@avatar/runtime";
import type { CounterStore } from "./store.js";

export const RATE_LIMIT_BUCKET = "ratelimit";
/** Bucket-wide TTL: a window's key is useless after one second, so ten is ample and keeps the bucket small. */
export const RATE_LIMIT_BUCKET_TTL_MS = 10_000;

export interface KvCounterStoreOptions {
  /** Compare-and-set rounds before giving up with KvCounterContentionError. */
  maxAttempts?: number;
}

export class KvCounterContentionError extends Error {
  constructor(key: string, attempts: number) {
    super(`rate limit counter ${key}: still conflicting after ${attempts} attempts`);
    this.name = "KvCounterContentionError";
  }
}

const KV_SAFE_TOKEN = /^[A-Za-z0-9_=-]+$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Waiter {
  resolve(count: number): void;
  reject(err: unknown): void;
}

/**
 * Counts shared by all gateway replicas, kept in a KV bucket with compare-and-set so that concurrent
 * increments from several replicas never lose a hit. One key per caller/endpoint and window.
 *
 * Hits on one key that arrive while a write for it is under way are added together in the next write
 * (+k in one compare-and-set), and each hit gets its own number of the range. A burst on one key thus
 * costs a few writes per replica instead of one contended write per request, whose retries would grow
 * with the burst and outlast the limiter's timeout.
 */
export class KvCounterStore implements CounterStore {
  readonly #kv: KvStore;
  readonly #maxAttempts: number;
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #writing = new Set<string>();
  /**
   * The count and revision this replica last wrote per key, by window: the next write goes straight to a
   * compare-and-set on that revision (one round trip) and reads only when another replica wrote in between.
   */
  readonly #written = new Map<number, Map<string, { count: number; revision: number }>>();

  constructor(kv: KvStore, options: KvCounterStoreOptions = {}) {
    this.#kv = kv;
    this.#maxAttempts = options.maxAttempts ?? 64;
  }

  increment(key: string, windowId: number): Promise<number> {
    const kvKey = kvKeyFor(key, windowId);
    return new Promise<number>((resolve, reject) => {
      const queue = this.#waiting.get(kvKey);
      if (queue) queue.push({ resolve, reject });
      else this.#waiting.set(kvKey, [{ resolve, reject }]);
      if (!this.#writing.has(kvKey)) void this.#drain(kvKey, windowId);
    });
  }

  /** What this replica wrote in `windowId`; older windows are forgotten. */
  #writtenIn(windowId: number): Map<string, { count: number; revision: number }> {
    let written = this.#written.get(windowId);
    if (!written) {
      for (const id of this.#written.keys()) if (id < windowId - 1) this.#written.delete(id);
      written = new Map();
      this.#written.set(windowId, written);
    }
    return written;
  }

  /** Writes the waiting hits of a key, batch after batch, until none are left. */
  async #drain(kvKey: string, windowId: number): Promise<void> {
    this.#writing.add(kvKey);
    try {
      for (let batch = this.#waiting.get(kvKey); batch; batch = this.#waiting.get(kvKey)) {
        this.#waiting.delete(kvKey);
        try {
          const total = await this.#add(kvKey, batch.length, this.#writtenIn(windowId));
          const first = total - batch.length + 1;
          for (const [i, w] of batch.entries()) w.resolve(first + i);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.#writing.delete(kvKey);
    }
  }

  /**
   * Adds `n` to the key's count with compare-and-set; answers the new count. The first guess needs no
   * read: the revision this replica wrote last, or none (create) for a key it has not written in this
   * window. Only when another replica wrote in between does it read and try again.
   */
  async #add(kvKey: string, n: number, written: Map<string, { count: number; revision: number }>) {
    // null: taken to be absent (create); undefined: unknown (read first).
    let known: { count: number; revision: number } | null | undefined = written.get(kvKey) ?? null;
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      if (known === undefined) {
        const entry = await this.#kv.get(kvKey);
        known = entry === null ? null : { count: decodeCount(entry.value, kvKey), revision: entry.revision };
      }
      try {
        const next = (known?.count ?? 0) + n;
        const revision = known
          ? await this.#kv.update(kvKey, encodeCount(next), known.revision)
          : await this.#kv.create(kvKey, encodeCount(next));
        written.set(kvKey, { count: next, revision });
        return next;
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
        known = undefined;
      }
    }
    throw new KvCounterContentionError(kvKey, this.#maxAttempts);
  }
}

/** Opens the shared bucket with its short TTL, so old windows vanish without a sweeper. */
export async function openKvCounterStore(bus: Bus, options?: KvCounterStoreOptions): Promise<KvCounterStore> {
  const kv = await bus.kv(RATE_LIMIT_BUCKET, { ttlMs: RATE_LIMIT_BUCKET_TTL_MS });
  return new KvCounterStore(kv, options);
}

/** `<token>.<windowId>`; a key that is not already a safe single token is hashed into one. */
export function kvKeyFor(key: string, windowId: number): string {
  const token = KV_SAFE_TOKEN.test(key) ? key : sha256Hex(key);
  return `${token}.${windowId}`;
}

function encodeCount(count: number): Uint8Array {
  return encoder.encode(String(count));
}

function decodeCount(value: Uint8Array, kvKey: string): number {
  const count = Number(decoder.decode(value));
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new Error(`rate limit counter ${kvKey} holds an invalid value`);
  }
  return count;
}
