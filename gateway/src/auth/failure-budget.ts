import { rateLimited } from "../http/http-error.js";
import { type RateLimitDecision, type RateLimiter, rateLimitHeaders, WINDOW_MS } from "../ratelimit/index.js";
import type { ApiKeyPrincipal } from "./api-keys.js";
import type { FailureGuard } from "./authenticate.js";

/**
 * A budget of failed authentications per client IP and one-second window, shared by every gateway
 * replica through the rate limiter's counters. An API key that is not cached is looked up only while
 * the IP has budget left, counting the lookups still under way as if they were going to fail; once it is
 * spent, such a key is refused with 429 without a lookup, so junk keys cannot reach the tokens service at
 * line rate (at most the budget per window and replica, also in a concurrent burst).
 */
export class AuthFailureBudget {
  /** This replica's view of each IP's failures in the current window (the global count it last saw). */
  readonly #failures = new Map<string, { windowId: number; count: number }>();
  readonly #pending = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `lookup` for `ip` when its budget allows (else throws `refuse(decision)`); a null answer (the
   * credential is invalid) counts as a failure before the lookup is released.
   */
  async lookup<T>(
    ip: string,
    lookup: () => Promise<T | null>,
    refuse: (decision: RateLimitDecision) => Error,
  ): Promise<T | null> {
    const spent = this.#failuresNow(ip) + (this.#pending.get(ip) ?? 0);
    if (spent >= this.limit) throw refuse(this.#refusal());
    this.#pending.set(ip, (this.#pending.get(ip) ?? 0) + 1);
    try {
      const answer = await lookup();
      if (answer === null) await this.recordFailure(ip);
      return answer;
    } finally {
      const left = (this.#pending.get(ip) ?? 1) - 1;
      if (left > 0) this.#pending.set(ip, left);
      else this.#pending.delete(ip);
    }
  }

  /** Counts one failed authentication of `ip` (also those checked without a lookup, e.g. a bad token). */
  async recordFailure(ip: string): Promise<void> {
    const decision = await this.limiter.hit({
      credential: `ip:${ip}`,
      endpoint: "failed-auth",
      limit: this.limit,
    });
    const windowId = this.#windowId();
    const count = decision.failedOpen ? 0 : decision.limit - decision.remaining + (decision.allowed ? 0 : 1);
    const seen = this.#failures.get(ip);
    const known = seen?.windowId === windowId ? seen.count + 1 : 1;
    if (this.#failures.size > 10_000) this.#prune(windowId);
    this.#failures.set(ip, { windowId, count: Math.max(known, count) });
  }

  #failuresNow(ip: string): number {
    const seen = this.#failures.get(ip);
    return seen?.windowId === this.#windowId() ? seen.count : 0;
  }

  #refusal(): RateLimitDecision {
    const now = this.now();
    const reset = Math.max(1, Math.ceil(((this.#windowId() + 1) * WINDOW_MS - now) / 1000));
    return { allowed: false, limit: this.limit, remaining: 0, resetSeconds: reset, failedOpen: false };
  }

  #windowId(): number {
    return Math.floor(this.now() / WINDOW_MS);
  }

  #prune(windowId: number): void {
    for (const [ip, seen] of this.#failures) if (seen.windowId !== windowId) this.#failures.delete(ip);
  }
}

/** One client's failure guard (authenticate.ts): its IP's budget, a refusal answered as a 429. */
export class ClientFailures implements FailureGuard {
  constructor(
    private readonly budget: AuthFailureBudget,
    private readonly clientIp: string,
  ) {}

  lookup(lookup: () => Promise<ApiKeyPrincipal | null>): Promise<ApiKeyPrincipal | null> {
    return this.budget.lookup(this.clientIp, lookup, (refusal) => rateLimited(rateLimitHeaders(refusal)));
  }

  failed(): Promise<void> {
    return this.budget.recordFailure(this.clientIp);
  }
}
