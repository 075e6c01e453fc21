import { randomUUID } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { currentRequestId, runWithRequestContext } from "./log.js";

export const REQUEST_ID_HEADER = "x-request-id";

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is reasonable, else a fresh one. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && acceptable.test(header) ? header : randomUUID();
}

/** Server side: every call runs with the request id it came with (or a new one) in its log context. */
export const serveRequestId: Interceptor = (next) => (req) =>
  runWithRequestContext({ requestId: requestIdFrom(req.header.get(REQUEST_ID_HEADER)) }, () => next(req));

/** Client side: calls made while serving a request carry its id onward. */
export const forwardRequestId: Interceptor = (next) => (req) => {
  const id = currentRequestId();
  if (id && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
  return next(req);
};
