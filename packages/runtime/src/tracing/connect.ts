import type { Interceptor } from "@connectrpc/connect";
import { SpanKind } from "@opentelemetry/api";
import { procedureOf } from "../metrics/connect.js";
import { tracingOn } from "./setup.js";
import { type Carrier, extractContext, injectContext, inSpan, SERVICE_ATTRIBUTE } from "./spans.js";

/** Server side: a call continues the trace its `traceparent` header names, in a server span. */
export function traceServedCalls(service: string): Interceptor {
  return (next) => (req) => {
    if (!tracingOn()) return next(req);
    const carrier: Carrier = {};
    req.header.forEach((value, key) => {
      carrier[key] = value;
    });
    const procedure = procedureOf(req);
    return inSpan(
      procedure,
      {
        kind: SpanKind.SERVER,
        parent: extractContext(carrier),
        attributes: { "rpc.system": "connect_rpc", "rpc.method": procedure, [SERVICE_ATTRIBUTE]: service },
      },
      () => next(req),
    );
  };
}

/** Client side: a call is a client span, and its `traceparent` goes out on the request's headers. */
export const traceCalls: Interceptor = (next) => (req) => {
  if (!tracingOn()) return next(req);
  const procedure = procedureOf(req);
  return inSpan(
    procedure,
    { kind: SpanKind.CLIENT, attributes: { "rpc.system": "connect_rpc", "rpc.method": procedure } },
    () => {
      for (const [key, value] of Object.entries(injectContext({}))) req.header.set(key, value);
      return next(req);
    },
  );
};
