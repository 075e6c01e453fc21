import type { IncomingMessage } from "node:http";

/**
 * A request's target as a URL (against a placeholder origin: only its path and query are read); undefined
 * for one Node's parser lets through and URL refuses, an absolute form with a bad host such as
 * `GET http://[::1 HTTP/1.1`, which the caller answers 400. Requests and WebSocket upgrades alike.
 */
export function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? "/", "http://gateway.invalid");
  } catch {
    return undefined;
  }
}
