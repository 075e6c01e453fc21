import { createHash } from "node:crypto";
import { type Bus, KvConflictError, type KvStore } from "@avatar/bus";
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

/**
 * Counts shared by all gateway replicas, kept in a KV bucket with compare-and-set so that concurrent
 * increments from several replicas never lose a hit. One key per caller/endpoint and window.
 */
export class KvCounterStore implements CounterStore {
  readonly #kv: KvStore;
  readonly #maxAttempts: number;

  constructor(kv: KvStore, options: KvCounterStoreOptions = {}) {
    this.#kv = kv;
    this.#maxAttempts = options.maxAttempts ?? 64;
  }

  async increment(key: string, windowId: number): Promise<number> {
    const kvKey = kvKeyFor(key, windowId);
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      // Reading first costs two round trips for every hit; creating first would cost three for every hit
      // after the first in a window.
      const entry = await this.#kv.get(kvKey);
      try {
        if (entry === null) {
          await this.#kv.create(kvKey, encodeCount(1));
          return 1;
        }
        const next = decodeCount(entry.value, kvKey) + 1;
        await this.#kv.update(kvKey, encodeCount(next), entry.revision);
        return next;
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
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
  const token = KV_SAFE_TOKEN.test(key) ? key : createHash("sha256").update(key).digest("hex");
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
