import { sha256Hex } from "@avatar/runtime";
import type { CounterStore } from "./store.js";

export const WINDOW_MS = 1000;

/** How many counter keys (credential and endpoint) the limiter keeps. */
const REMEMBERED_COUNTER_KEYS = 10_000;

export interface RateLimitHit {
  /** Who is counted: API key, session token or client IP. Hashed before it becomes a key. */
  credential: string;
  /** Endpoint class with path parameters removed, e.g. "POST /v1/sessions/start". */
  endpoint: string;
  /** Requests allowed per window; a positive integer. */
  limit: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window; never negative. */
  remaining: number;
  /** Whole seconds until the window resets (1 for one-second windows). */
  resetSeconds: number;
  /** True when the store was skipped or failed and the request was let through unchecked. */
  failedOpen: boolean;
}

export interface RateLimitLogger {
  warn(message: string, fields: Record<string, unknown>): void;
}

export interface RateLimiterOptions {
  store: CounterStore;
  logger: RateLimitLogger;
  /** Epoch milliseconds; windows are floor(now() / 1000). */
  now?: () => number;
  /** Longest wait for the store before the request is let through. */
  storeTimeoutMs?: number;
  /** After `failuresBeforeCooldown` failures in a row, the store is not asked again for this long. */
  cooldownMs?: number;
  failuresBeforeCooldown?: number;
  /** At most one warning per this interval; the warning counts the unchecked requests since the last. */
  warnIntervalMs?: number;
  /** When it returns false the store is skipped at once (e.g. `() => bus.status() === "connected"`). */
  isAvailable?: () => boolean;
  /** Told every decision (the gateway counts them as metrics). */
  onDecision?: (endpoint: string, decision: RateLimitDecision) => void;
}

type FailOpenReason = "error" | "timeout" | "unavailable" | "cooldown";

/**
 * Fixed one-second windows per credential and endpoint. It only decides; the HTTP layer calls it before
 * doing anything else and turns a rejection into a 429. A broken or slow store never fails a request:
 * the request is allowed, and a throttled warning says so.
 */
export class RateLimiter {
  readonly #store: CounterStore;
  readonly #logger: RateLimitLogger;
  readonly #now: () => number;
  readonly #storeTimeoutMs: number;
  readonly #cooldownMs: number;
  readonly #warnIntervalMs: number;
  readonly #isAvailable: (() => boolean) | undefined;
  readonly #onDecision: RateLimiterOptions["onDecision"];

  readonly #failuresBeforeCooldown: number;

  #skipStoreUntil = Number.NEGATIVE_INFINITY;
  #consecutiveFailures = 0;
  #lastWarnAt = Number.NEGATIVE_INFINITY;
  #uncheckedSinceWarn = 0;
  #lastStoreError: string | undefined;
  /** counterKey by endpoint and credential. */
  readonly #counterKeys = new Map<string, Map<string, string>>();
  #counterKeyCount = 0;

  constructor(options: RateLimiterOptions) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#storeTimeoutMs = options.storeTimeoutMs ?? 50;
    this.#cooldownMs = options.cooldownMs ?? 1000;
    this.#failuresBeforeCooldown = options.failuresBeforeCooldown ?? 3;
    this.#warnIntervalMs = options.warnIntervalMs ?? 5000;
    this.#isAvailable = options.isAvailable;
    this.#onDecision = options.onDecision;
  }

  async hit(request: RateLimitHit): Promise<RateLimitDecision> {
    const decision = await this.#decide(request);
    this.#onDecision?.(request.endpoint, decision);
    return decision;
  }

  async #decide({ credential, endpoint, limit }: RateLimitHit): Promise<RateLimitDecision> {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
    }
    const nowMs = this.#now();
    const windowId = Math.floor(nowMs / WINDOW_MS);
    const resetSeconds = Math.ceil(((windowId + 1) * WINDOW_MS - nowMs) / 1000);

    if (nowMs < this.#skipStoreUntil) return this.#failOpen(limit, resetSeconds, nowMs, "cooldown");
    if (!this.#storeLooksAvailable()) return this.#failOpen(limit, resetSeconds, nowMs, "unavailable");

    let count: number;
    try {
      count = await this.#incrementWithTimeout(this.#counterKey(credential, endpoint), windowId, limit);
    } catch (err) {
      const failedAt = this.#now();
      // One slow answer is not an outage: only a run of failures sends the store into cool-down.
      this.#consecutiveFailures++;
      if (this.#consecutiveFailures >= this.#failuresBeforeCooldown) {
        this.#skipStoreUntil = failedAt + this.#cooldownMs;
        this.#consecutiveFailures = 0;
      }
      this.#lastStoreError = err instanceof Error ? err.message : String(err);
      const reason = err instanceof StoreTimeoutError ? "timeout" : "error";
      return this.#failOpen(limit, resetSeconds, failedAt, reason);
    }
    this.#consecutiveFailures = 0;
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds,
      failedOpen: false,
    };
  }

  /** counterKey, remembered for the credentials seen lately (a hash per request showed in profiles). */
  #counterKey(credential: string, endpoint: string): string {
    const known = this.#counterKeys.get(endpoint)?.get(credential);
    if (known !== undefined) return known;
    const key = counterKey(credential, endpoint);
    // A bound on what is kept: past it, the keys are made again as requests come.
    if (this.#counterKeyCount >= REMEMBERED_COUNTER_KEYS) {
      this.#counterKeys.clear();
      this.#counterKeyCount = 0;
    }
    let ofEndpoint = this.#counterKeys.get(endpoint);
    if (!ofEndpoint) {
      ofEndpoint = new Map();
      this.#counterKeys.set(endpoint, ofEndpoint);
    }
    ofEndpoint.set(credential, key);
    this.#counterKeyCount++;
    return key;
  }

  #storeLooksAvailable(): boolean {
    if (!this.#isAvailable) return true;
    try {
      return this.#isAvailable();
    } catch {
      return false;
    }
  }

  async #incrementWithTimeout(key: string, windowId: number, limit: number): Promise<number> {
    const answer = this.#store.increment(key, windowId, limit);
    // A store that answered at once (in memory, or from a lease): no timer to arm and clear.
    if (typeof answer === "number") return answer;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(this.#storeTimeoutMs)), this.#storeTimeoutMs);
    });
    try {
      // Promise.race also handles a late rejection of the abandoned store call.
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  #failOpen(limit: number, resetSeconds: number, nowMs: number, reason: FailOpenReason): RateLimitDecision {
    this.#uncheckedSinceWarn++;
    if (nowMs - this.#lastWarnAt >= this.#warnIntervalMs) {
      this.#logger.warn("rate limit store unavailable; requests are allowed unchecked", {
        reason,
        lastStoreError: this.#lastStoreError,
        uncheckedRequests: this.#uncheckedSinceWarn,
      });
      this.#lastWarnAt = nowMs;
      this.#uncheckedSinceWarn = 0;
    }
    // The count is unknown; report what a first request in a window would see.
    return { allowed: true, limit, remaining: limit - 1, resetSeconds, failedOpen: true };
  }
}

/** One opaque key per credential and endpoint; the raw credential never leaves this function. */
export function counterKey(credential: string, endpoint: string): string {
  // Length prefix keeps ("ab", "c") and ("a", "bc") apart.
  return sha256Hex(`${credential.length}:${credential}${endpoint}`);
}

class StoreTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`rate limit store did not answer within ${timeoutMs} ms`);
    this.name = "StoreTimeoutError";
  }
}
