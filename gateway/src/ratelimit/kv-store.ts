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

/**
 * A replica never holds more than this share of a limit as numbers it has leased and not handed out yet:
 * a limit of 10 (the interface's) is counted hit by hit, a benchmark's limit of a million in leases of
 * thousands.
 */
export const LEASE_SHARE_OF_LIMIT = 1 / 32;

interface Waiter {
  limit: number;
  resolve(count: number): void;
  reject(err: unknown): void;
}

/** What this replica knows of one key in one window. */
interface KeyState {
  /** The key's count after this replica's last write, and that write's revision. */
  count: number;
  revision: number;
  /** The numbers of the last lease not handed out yet: `next` to `count`. */
  next: number;
  /** How many numbers the last lease took; the next may take twice as many. */
  leased: number;
}

/**
 * Counts shared by all gateway replicas, kept in a KV bucket with compare-and-set so that concurrent
 * increments from several replicas never lose a hit. One key per caller/endpoint and window.
 *
 * A replica takes numbers from the shared count in leases: one compare-and-set adds k to the count and the
 * replica hands out the k numbers it bought, one per hit, without asking again. The first lease of a key
 * in a window takes only the hits waiting for it; each next one may take twice as many as the one before,
 * up to `LEASE_SHARE_OF_LIMIT` of the limit. So a steady flood costs a few writes a second, a limit under
 * 64 is counted hit by hit as before, and the hits admitted across all replicas never pass the limit: each
 * number is handed out once. What a lease costs is the other way: numbers a replica bought and did not hand out
 * before the window ended were admitted nowhere (at most the last lease of each replica and key).
 * Once the count has reached the limit, this replica rejects that key's further hits without writing.
 */
export class KvCounterStore implements CounterStore {
  readonly #kv: KvStore;
  readonly #maxAttempts: number;
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #writing = new Set<string>();
  readonly #states = new Map<number, Map<string, KeyState>>();

  constructor(kv: KvStore, options: KvCounterStoreOptions = {}) {
    this.#kv = kv;
    this.#maxAttempts = options.maxAttempts ?? 64;
  }

  increment(key: string, windowId: number, limit: number): number | Promise<number> {
    const kvKey = kvKeyFor(key, windowId);
    // A hit waits behind the hits already waiting for a write; otherwise a lease may answer it at once.
    if (!this.#writing.has(kvKey)) {
      const state = this.#statesIn(windowId).get(kvKey);
      const number = state && takeNumber(state, limit);
      if (number !== undefined) return number;
    }
    return new Promise<number>((resolve, reject) => {
      const queue = this.#waiting.get(kvKey);
      if (queue) queue.push({ limit, resolve, reject });
      else this.#waiting.set(kvKey, [{ limit, resolve, reject }]);
      if (!this.#writing.has(kvKey)) void this.#drain(kvKey, windowId);
    });
  }

  /** What this replica knows of the keys of `windowId`; older windows are forgotten. */
  #statesIn(windowId: number): Map<string, KeyState> {
    let states = this.#states.get(windowId);
    if (!states) {
      for (const id of this.#states.keys()) if (id < windowId - 1) this.#states.delete(id);
      states = new Map();
      this.#states.set(windowId, states);
    }
    return states;
  }

  /** Answers the waiting hits of a key, batch after batch, leasing numbers when it has none left. */
  async #drain(kvKey: string, windowId: number): Promise<void> {
    this.#writing.add(kvKey);
    try {
      for (let batch = this.#waiting.get(kvKey); batch; batch = this.#waiting.get(kvKey)) {
        this.#waiting.delete(kvKey);
        const states = this.#statesIn(windowId);
        let answered = 0;
        try {
          const state = states.get(kvKey);
          answered = answerFrom(state, batch, 0);
          if (answered < batch.length) {
            const size = leaseSize(batch.length - answered, batch[0]?.limit ?? 1, state?.leased ?? 0);
            answered = answerFrom(await this.#lease(kvKey, size, states), batch, answered);
          }
        } catch (err) {
          for (const w of batch.slice(answered)) w.reject(err);
        }
      }
    } finally {
      this.#writing.delete(kvKey);
    }
  }

  /**
   * Adds `size` to the key's count with compare-and-set and keeps the numbers bought as the key's lease.
   * The first guess needs no read: the revision this replica wrote last, or none (create) for a key it has
   * not written in this window. Only when another replica wrote in between does it read and try again.
   */
  async #lease(kvKey: string, size: number, states: Map<string, KeyState>): Promise<KeyState> {
    const mine = states.get(kvKey);
    // null: taken to be absent (create); undefined: unknown (read first).
    let known: { count: number; revision: number } | null | undefined = mine ?? null;
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      if (known === undefined) {
        const entry = await this.#kv.get(kvKey);
        known = entry === null ? null : { count: decodeCount(entry.value, kvKey), revision: entry.revision };
      }
      try {
        const count = (known?.count ?? 0) + size;
        const revision = known
          ? await this.#kv.update(kvKey, encodeCount(count), known.revision)
          : await this.#kv.create(kvKey, encodeCount(count));
        const state = { count, revision, next: count - size + 1, leased: size };
        states.set(kvKey, state);
        return state;
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
        known = undefined;
      }
    }
    throw new KvCounterContentionError(kvKey, this.#maxAttempts);
  }
}

/**
 * The hit's number from the key's lease; past the limit, a number above it without writing (the count
 * only grows within a window, so no later write could admit the hit); none when a lease must be bought.
 */
function takeNumber(state: KeyState, limit: number): number | undefined {
  if (state.next <= state.count) return state.next++;
  if (state.count >= limit) return state.count + 1;
  return undefined;
}

/** Answers waiters from `from` on while the state has numbers for them; returns how far it got. */
function answerFrom(state: KeyState | undefined, batch: Waiter[], from: number): number {
  let i = from;
  for (; i < batch.length; i++) {
    const waiter = batch[i] as Waiter;
    const number = state && takeNumber(state, waiter.limit);
    if (number === undefined) break;
    waiter.resolve(number);
  }
  return i;
}

/**
 * The waiting hits' numbers, or more: twice the key's last lease in this window (none: 0) within the
 * share of the limit.
 */
function leaseSize(waiting: number, limit: number, lastLease: number): number {
  return Math.max(waiting, Math.min(Math.max(1, Math.floor(limit * LEASE_SHARE_OF_LIMIT)), lastLease * 2));
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
