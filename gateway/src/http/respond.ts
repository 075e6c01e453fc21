import type { ServerResponse } from "node:http";

/*
 * Both functions take the request's own headers object (app.ts makes one per request) and set the content
 * headers on it rather than on a copy: never pass one that is shared.
 */

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  headers["Content-Type"] = "application/json";
  headers["Content-Length"] = String(Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
}

export function sendRaw(
  res: ServerResponse,
  status: number,
  raw: { contentType: string; body: string | Buffer } | null,
  headers: Record<string, string>,
): void {
  if (res.headersSent) return;
  if (raw === null) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  headers["Content-Type"] = raw.contentType;
  headers["Content-Length"] = String(Buffer.byteLength(raw.body));
  res.writeHead(status, headers);
  res.end(raw.body);
}
