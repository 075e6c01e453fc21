import type { IncomingMessage } from "node:http";
import { HttpError } from "./http-error.js";

/**
 * Reads the whole request body, refusing more than `maxBytes` with 413. Listeners rather than `for await`:
 * a stream's async iterator cost ~2 % of a token mint.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new HttpError(413, "Request body too large"));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: unknown) => {
      req.off("data", onData).off("end", onEnd).off("error", done).off("close", onClose);
      if (err !== undefined) reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      done(new HttpError(413, "Request body too large"));
      req.destroy();
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    // Closed before its end: the client went away mid-body.
    const onClose = () => done(new Error("request closed before its body ended"));
    req.on("data", onData).on("end", onEnd).on("error", done).on("close", onClose);
  });
}
