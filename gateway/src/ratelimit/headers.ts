import type { RateLimitDecision } from "./limiter.js";

/** Headers for every rate-limited response; a rejection also gets Retry-After, equal to the reset. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return setRateLimitHeaders({}, decision);
}

/** Sets the rate-limit headers of `decision` on `headers` (a response's own); answers `headers`. */
export function setRateLimitHeaders(
  headers: Record<string, string>,
  decision: RateLimitDecision,
): Record<string, string> {
  headers["X-RateLimit-Limit"] = String(decision.limit);
  headers["X-RateLimit-Remaining"] = String(decision.remaining);
  headers["X-RateLimit-Reset"] = String(decision.resetSeconds);
  if (!decision.allowed) headers["Retry-After"] = String(decision.resetSeconds);
  return headers;
}
