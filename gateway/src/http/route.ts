import type { Bus } from "@avatar/bus";
import type { Clients, Logger } from "@avatar/runtime";
import type { ApiKeyPrincipal } from "../auth/api-keys.js";
import type { SessionPrincipal } from "../auth/session-tokens.js";
import type { ParseResult } from "../schema/issues.js";

/**
 * Which credential an operation takes (contract section 2):
 * - none: no credential, counted per client IP;
 * - api_key: `X-API-KEY` only;
 * - session_token: bearer session token only;
 * - api_key_or_session: either (stop, keep-alive; with an API key the body names the session);
 * - api_key_or_cookie: API key, or the `la_session` cookie (session reads).
 */
export type AuthPolicy = "none" | "api_key" | "session_token" | "api_key_or_session" | "api_key_or_cookie";

export type Principal = ApiKeyPrincipal | SessionPrincipal | { kind: "anonymous" };

export interface Parser<T, I> {
  parse(input: I): ParseResult<T>;
}

export interface RequestContext<P, Q, B> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  clients: Clients;
  /** The bus, for what is relayed to a session's pipeline worker (WHEP). */
  bus: Bus;
  log: Logger;
  /** Absolute base URL of the public API as the caller reached it (for next/previous links). */
  baseUrl: string;
  /** The path and query the caller used, for pagination links. */
  url: URL;
  requestId: string;
  /** Cookies to set on the response. */
  setCookie(cookie: string): void;
}

export interface RouteResult {
  status?: number;
  data?: unknown;
  message?: string;
  /** Replaces the envelope (for 204 and non-JSON answers). */
  raw?: { contentType: string; body: string | Buffer } | null;
  headers?: Record<string, string>;
}

export interface Route<P = unknown, Q = unknown, B = unknown> {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path pattern, parameters in braces: `/v1/avatars/{avatar_id}`. */
  path: string;
  summary: string;
  auth: AuthPolicy;
  /** Requests per second per credential. */
  rateLimit: number;
  /** Browsers may call it from any origin, with credentials. */
  cors?: boolean;
  params?: Parser<P, Record<string, string>>;
  query?: Parser<Q, URLSearchParams>;
  body?: Parser<B, unknown>;
  /**
   * The body is text of this media type rather than JSON (WHEP's `application/sdp`): it reaches the
   * handler as a string; another Content-Type is 415, an empty body 400.
   */
  textBody?: string;
  /** No body (or JSON null) is allowed and reads as `{}`. */
  optionalBody?: boolean;
  /** Success status when the handler does not say (200 by default). */
  status?: number;
  /** For the OpenAPI document. */
  schemas?: { params?: unknown; query?: unknown; body?: unknown };
  handle(ctx: RequestContext<P, Q, B>): Promise<RouteResult>;
}

/** Keeps each route's parser and handler types in step. */
export function route<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  r: Route<P, Q, B>,
): Route<unknown, unknown, unknown> {
  return r as unknown as Route<unknown, unknown, unknown>;
}
