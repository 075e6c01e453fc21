import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { failure } from "./envelope.js";

/**
 * Writes a complete HTTP/1.1 error answer (the envelope as body) straight to a socket and closes it:
 * for requests that never became a request object (a refused WebSocket upgrade, a request Node's
 * parser rejected).
 */
export function endWithError(
  socket: Duplex,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(failure(status, message));
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`,
    "Connection: close",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

/**
 * What Node's parser rejected, in the envelope instead of Node's empty default answers: headers too
 * large 431, a request that took too long 408, anything else malformed 400.
 */
export function clientErrorAnswer(err: NodeJS.ErrnoException): { status: number; message: string } {
  if (err.code === "HPE_HEADER_OVERFLOW") return { status: 431, message: "Request header fields too large" };
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, message: "Request timeout" };
  return { status: 400, message: "Bad request" };
}
