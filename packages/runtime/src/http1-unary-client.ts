import http from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { getAbortSignalReason } from "@connectrpc/connect/protocol";

/*
 * The HTTP/1.1 client of the services' calls (unary-transport.ts). connect-node's client, made for
 * streams, flushes the headers on their own first (a second socket write per call), and links abort
 * signals and a race per body chunk: together 100-170 µs of CPU a call more than this (2026-11-24).
 * Connections are kept alive in the agent's pool. Errors are Connect's, as connect-node's client makes
 * them: a peer that cannot be reached is Unavailable, a connection cut mid-call Aborted, and a call
 * whose signal fires (its deadline, or its caller gave up) fails with the signal's reason. Two socket
 * errors connect-node leaves as Internal are named here too: EHOSTUNREACH (Unavailable, as a refused
 * connection) and EPIPE (Aborted, as a reset one).
 */

/** An HTTP answer read whole. */
export interface WholeAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  trailers: NodeJS.Dict<string>;
}

/** One request with a known length in one write (headers and body together), its answer read whole. */
export function postWhole(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
  signal: AbortSignal,
  agent: http.Agent,
): Promise<WholeAnswer> {
  return new Promise<WholeAnswer>((resolve, reject) => {
    if (signal.aborted) return reject(getAbortSignalReason(signal));
    const request = http.request(url, {
      method,
      headers: { ...headers, "content-length": String(body.length) },
      agent,
    });
    const fail = (err: unknown) => {
      signal.removeEventListener("abort", onAbort);
      request.destroy();
      reject(err instanceof ConnectError ? err : connectErrorFromSocket(err));
    };
    const onAbort = () => fail(getAbortSignalReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    request.on("error", fail);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", fail);
      response.on("end", () => {
        signal.removeEventListener("abort", onAbort);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
          trailers: response.trailers,
        });
      });
    });
    request.end(body);
  });
}

export function nodeHeaders(header: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  header.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function webHeaders(node: http.IncomingHttpHeaders | NodeJS.Dict<string>): Headers {
  const out = new Headers();
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else out.set(key, value);
  }
  return out;
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH"]);
const CUT = new Set(["ECONNRESET", "EPIPE", "ERR_STREAM_DESTROYED"]);

/** What a failed socket means to a caller, with the codes connect-node's client gives the same failures. */
function connectErrorFromSocket(err: unknown): ConnectError {
  const code = (err as { code?: unknown } | null)?.code;
  const connectCode =
    typeof code === "string" && UNREACHABLE.has(code)
      ? Code.Unavailable
      : typeof code === "string" && CUT.has(code)
        ? Code.Aborted
        : Code.Internal;
  const ce = ConnectError.from(err, connectCode);
  if (ce !== err) ce.cause = err;
  return ce;
}
