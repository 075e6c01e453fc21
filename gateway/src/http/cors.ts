import type { IncomingMessage } from "node:http";

/** CORS for browser-facing routes: any origin, with credentials, so the origin is echoed back. */
export function corsHeaders(req: IncomingMessage, preflight: boolean): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin) return {};
  const headers: Record<string, string> = {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Credentials": "true",
    "Access-Control-Expose-Headers":
      "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location",
    Vary: "Origin",
  };
  if (preflight) {
    headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS";
    headers["Access-Control-Allow-Headers"] =
      req.headers["access-control-request-headers"] ?? "Authorization, Content-Type, X-Request-Id";
    headers["Access-Control-Max-Age"] = "600";
  }
  return headers;
}
