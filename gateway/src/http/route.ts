import type { Bus } from "@avatar/bus";
import type { Clients, Logger } from "@avatar/runtime";
import type { ApiKeyPrincipal } from "../auth/api-keys.js";
import type { SessionPrincipal } from "../auth/session-tokens.js";
import type { RateLimitClass } from "../limits.js";
import type { ParseResult } from "../schema/issues.js";
import type { HttpError } from "./http-error.js";

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
  /** The services, each call made on behalf of this request (its id reaches their log lines). */
  clients: Clients;
  /** The process's own clients, for what requests share (a batch of mints carries each one's id itself). */
  processClients: Clients;
  /** The bus, for what is relayed to a session's pipeline worker (WHEP). */
  bus: Bus;
  log: Logger;
  /** Absolute base URL of the public API (http/public-url.ts: never from an untrusted Host). */
  baseUrl: string;
  /** The caller reached us over HTTPS (its own TLS, or a trusted proxy that says so). */
  https: boolean;
  /** The path and query the caller used, for pagination links. */
  url: URL;
  requestId: string;
  /** Cookies to set on the response. */
  setCookie(cookie: string): void;
  /** True when the API key with this id has been revoked (or does not exist). */
  apiKeyRevoked(apiKeyId: string): Promise<boolean>;
  /** The browser's Origin header, if any. */
  origin: string | undefined;
  /** The browser says the request comes from a page of this service (Sec-Fetch-Site: same-origin). */
  sameOrigin: boolean;
}

/** The origins allowed to call a route for the resource its path names ("*" for any). */
export type CorsOrigins = (params: Record<string, string>, clients: Clients) => Promise<readonly string[]>;

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
  /** Which of the interface's limits counts its requests (per credential, per second). */
  rateLimit: RateLimitClass;
  /**
   * Browsers may call it cross-origin: `true` from any origin with credentials; a function gives the
   * origins allowed for this request's resource (an embed's), answered without credentials.
   */
  cors?: boolean | CorsOrigins;
  /** Turns every failure of the route (the rate limit's 429 included) into what its callers may see. */
  errors?: (err: unknown) => HttpError;
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
