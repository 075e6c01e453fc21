import { errorDetailOf } from "@avatar/runtime";
import { ConnectError } from "@connectrpc/connect";
import { HttpError, toHttpError } from "../http/http-error.js";

/**
 * What an embed's visitor is told when their session cannot be had: a stable `reason` for the page
 * and a `visitor_message` written for the visitor, never an operator's note or a service's own words
 * (those go to the log with the request id). `message` carries the same visitor text.
 */
const VISITOR_TEXT = {
  embed_not_found: "This conversation is not available.",
  embed_disabled: "This conversation is not available right now.",
  embed_busy: "The avatar is talking with other visitors right now. Please try again in a few minutes.",
  embed_hourly_limit: "The avatar has had many visitors this hour. Please try again later.",
  origin_not_allowed: "This conversation cannot be used on this website.",
  rate_limited: "Too many attempts. Please wait a moment and try again.",
  unavailable: "This conversation cannot start right now. Please try again later.",
  server_error: "Something went wrong. Please try again.",
} as const;

export type VisitorReason = keyof typeof VISITOR_TEXT;

export function visitorError(status: number, reason: VisitorReason, headers: Record<string, string> = {}) {
  const text = VISITOR_TEXT[reason];
  return new HttpError(status, text, undefined, headers, { reason, visitor_message: text });
}

/** Any failure of a visitor's request, as the visitor may see it (422 bodies are kept: they are the visitor's input). */
export function forVisitor(err: unknown): HttpError {
  const e = toHttpError(err);
  if (e.status === 422 || e.fields) return e;
  const reason = err instanceof ConnectError ? errorDetailOf(err)?.reason : undefined;
  if (reason === "EMBED_BUSY") return visitorError(429, "embed_busy");
  if (reason === "EMBED_HOURLY_LIMIT") return visitorError(429, "embed_hourly_limit");
  if (reason === "EMBED_DISABLED") return visitorError(403, "embed_disabled");
  if (e.status === 404) return visitorError(404, "embed_not_found");
  if (e.status === 429) return visitorError(429, "rate_limited", e.headers);
  // Credits the owner lacks, an avatar deactivated since, a service that is down: not the visitor's to know.
  if (e.status === 402) return visitorError(503, "unavailable");
  if (e.status >= 500)
    return visitorError(e.status === 503 ? 503 : 500, e.status === 503 ? "unavailable" : "server_error");
  return visitorError(e.status, "unavailable");
}
