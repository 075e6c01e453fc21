/**
 * The interface's Limits section: requests per second per credential and endpoint. Every endpoint has
 * the default limit (RATE_LIMIT_PER_SECOND, 10 unless an operator grants more); the session lifecycle
 * calls (start, stop, keep-alive) have their own, counted per session token.
 */
export type RateLimitClass = "default" | "session_lifecycle";

/** The interface's default limit. */
export const LIMIT_DEFAULT = 10;
/** Start, stop and keep-alive, per session token. */
export const LIMIT_SESSION_LIFECYCLE = 5;

/** The limit of an endpoint of `kind`, with the configured default. */
export function limitOf(kind: RateLimitClass, perSecond: number): number {
  return kind === "session_lifecycle" ? LIMIT_SESSION_LIFECYCLE : perSecond;
}
