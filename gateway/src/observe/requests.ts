import type { IncomingMessage, ServerResponse } from "node:http";
import {
  httpRequestDuration,
  httpRequests,
  inSpan,
  SERVICE_ATTRIBUTE,
  SpanKind,
  tracingOn,
} from "@avatar/runtime";
import { type Span, SpanStatusCode } from "@opentelemetry/api";
import type { Route } from "../http/route.js";
import type { RouteLookup } from "../http/router.js";

/** The route label of a request: its pattern (`/v1/sessions/{session_id}`), or `unmatched`. */
export function routeLabel(found: RouteLookup<Route>): string {
  return found.kind === "found" ? found.match.route.path : "unmatched";
}

/**
 * One public request, counted and timed by route pattern, method and status once its response is done,
 * and (with tracing on) a server span around `serve` that the calls it makes continue. The public edge
 * starts its own traces: a caller's `traceparent` is not trusted.
 */
export function observeRequest(
  res: ServerResponse<IncomingMessage>,
  route: string,
  method: string,
  serve: () => void,
): void {
  const stop = httpRequestDuration.startTimer({ route, method });
  const done = (): number => {
    stop();
    httpRequests.inc({ route, method, status: String(res.statusCode) });
    return res.statusCode;
  };
  if (!tracingOn()) {
    res.once("close", done);
    serve();
    return;
  }
  const closed = new Promise<number>((resolve) => res.once("close", () => resolve(done())));
  void inSpan(
    `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: { "http.request.method": method, "http.route": route, [SERVICE_ATTRIBUTE]: "gateway" },
    },
    async (span) => {
      serve();
      finish(span, await closed);
    },
  );
}

function finish(span: Span | undefined, status: number): void {
  span?.setAttribute("http.response.status_code", status);
  if (status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
}
