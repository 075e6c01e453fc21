import type { ServerResponse } from "node:http";

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
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
  res.writeHead(status, {
    ...headers,
    "Content-Type": raw.contentType,
    "Content-Length": String(Buffer.byteLength(raw.body)),
  });
  res.end(raw.body);
}
