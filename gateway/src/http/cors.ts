import type { IncomingMessage } from "node:http";
import { embedOriginAllowed } from "@avatar/runtime";

const EXPOSED =
  "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location";

/**
 * CORS for browser-facing routes. The session-token routes (start, stop, keep-alive) may be called from
 * any origin with credentials (contract section 1), so a real origin is echoed back, never the opaque
 * `null`. A route with its own list of origins (an embed's) echoes only those, without credentials.
 */
export function corsHeaders(
  req: IncomingMessage,
  preflight: boolean,
  allowedOrigins?: readonly string[],
): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || origin === "null" || !URL.canParse(origin)) return {};
  if (allowedOrigins && !embedOriginAllowed(origin, allowedOrigins)) return { Vary: "Origin" };
  const headers: Record<string, string> = {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": EXPOSED,
    Vary: "Origin",
  };
  if (!allowedOrigins) headers["Access-Control-Allow-Credentials"] = "true";
  if (preflight) {
    headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS";
    headers["Access-Control-Allow-Headers"] =
      req.headers["access-control-request-headers"] ?? "Authorization, Content-Type, X-Request-Id";
    headers["Access-Control-Max-Age"] = "600";
  }
  return headers;
}
