/**
 * Opens a client WebSocket for a realtime provider and turns a refused handshake into a ProviderError
 * (HTTP 401/403 unauthorized, 429 rate_limited with Retry-After, other 4xx bad_request, else
 * unavailable). Handlers are attached before the handshake, so nothing the server sends right after
 * accepting can be lost between `open` and the caller's first await.
 */
import WebSocket from "ws";
import { errorBodyMessage, errorForStatus } from "../http-errors.js";
import { ProviderError } from "../types.js";

export interface SocketHandlers {
  onMessage(data: WebSocket.RawData, isBinary: boolean): void;
  /** Only for a socket that opened. */
  onClose(code: number, reason: string): void;
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

export function connectWebSocket(
  provider: string,
  url: string,
  options: ConnectOptions,
  handlers: SocketHandlers,
): Promise<WebSocket> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const ws = new WebSocket(url, { headers: options.headers, handshakeTimeout: options.timeoutMs });
    let settled = false;
    let opened = false;
    const timer = setTimeout(
      () => settle(new ProviderError(provider, `${provider}: no handshake within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const onAbort = () => settle(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });

    function settle(error?: unknown): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (error === undefined) {
        resolve(ws);
        return;
      }
      reject(error);
      ws.terminate();
    }

    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (piece: string) => {
        if (body.length < 8192) body += piece;
      });
      const refuse = () => {
        const retryAfter = res.headers["retry-after"];
        settle(errorForStatus(provider, res.statusCode ?? 0, errorBodyMessage(body), retryAfter?.toString()));
      };
      res.on("end", refuse);
      res.on("error", refuse);
    });
    ws.on("error", (err) => {
      if (!opened)
        settle(
          new ProviderError(provider, `${provider}: cannot connect: ${err.message}`, "unavailable", {
            cause: err,
          }),
        );
    });
    ws.on("open", () => {
      opened = true;
      settle();
    });
    ws.on("message", (data, isBinary) => handlers.onMessage(data, isBinary));
    ws.on("close", (code, reason) => {
      if (opened) handlers.onClose(code, reason.toString());
      else settle(new ProviderError(provider, `${provider}: connection closed during the handshake`));
    });
  });
}

/** Base64 of PCM bytes without copying them first. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Bytes of a base64 string as a plain Uint8Array view. */
export function fromBase64(text: string): Uint8Array {
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** A frame's text, whether it came as a text or a binary frame. */
export function frameText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}
