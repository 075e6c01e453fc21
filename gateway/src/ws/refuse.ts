import type { Duplex } from "node:stream";
import { endWithError } from "../http/raw-response.js";

/** Answers an upgrade request with a plain HTTP error (the envelope as body) and closes the socket. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  endWithError(socket, status, message, headers);
}
