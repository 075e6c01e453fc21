import { randomUUID } from "node:crypto";
import {
  type CallOptions,
  type ContextValues,
  createContextKey,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";

export const REQUEST_ID_HEADER = "x-request-id";

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id when it is reasonable, else a fresh one. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && acceptable.test(header) ? header : randomUUID();
}

/**
 * A call's request id travels in its Connect context values, by hand: a handler that calls on for its
 * caller passes `onBehalfOf(requestIdOf(ctx.values))` with the call. Nothing carries it implicitly
 * across awaits (log.ts says why).
 */
const requestIdKey = createContextKey<string | undefined>(undefined, { description: "request id" });

/** The request id of a served call (its handler's `ctx.values`), or of a call being made. */
export function requestIdOf(values: ContextValues): string | undefined {
  return values.get(requestIdKey);
}

/** The options of a call made for request `requestId`: the call carries it on (forwardRequestId). */
export function onBehalfOf(requestId: string | undefined): CallOptions {
  return requestId ? { contextValues: createContextValues().set(requestIdKey, requestId) } : {};
}

/**
 * A served call's request id: the caller's when it is reasonable, else a fresh one, kept in the call's
 * context values (`values`) for its handler. Answers the id.
 */
export function serveWithRequestId(values: ContextValues, callerId: string | null | undefined): string {
  const id = requestIdFrom(callerId);
  values.set(requestIdKey, id);
  return id;
}

/** Server side: every call has the request id it came with (or a new one) in its context values. */
export const serveRequestId: Interceptor = (next) => (req) => {
  serveWithRequestId(req.contextValues, req.header.get(REQUEST_ID_HEADER));
  return next(req);
};

/** Client side: a call made on behalf of a request (onBehalfOf) carries its id in the header. */
export const forwardRequestId: Interceptor = (next) => (req) => {
  const id = requestIdOf(req.contextValues);
  if (id && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
  return next(req);
};
