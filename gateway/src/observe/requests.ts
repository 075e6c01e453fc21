import type { RequestListener } from "node:http";
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
import type { Router } from "../http/router.js";

/** The route label of a request: its pattern (`/v1/sessions/{session_id}`), or `unmatched`. */
export function routeLabel(router: Router<Route>, method: string, url: string | undefined): string {
  const path = new URL(url ?? "/", "http://gateway.invalid").pathname;
  const found = router.lookup(method === "OPTIONS" ? "POST" : method, path);
  return found.kind === "found" ? found.match.route.path : "unmatched";
}

/**
 * Every public request, counted and timed by route pattern, method and status, and (with tracing on) a
 * server span that the calls it makes continue. The public edge starts its own traces: a caller's
 * `traceparent` is not trusted.
 */
export function observeRequests(handle: RequestListener, router: Router<Route>): RequestListener {
  return (req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const route = routeLabel(router, method, req.url);
    const stop = httpRequestDuration.startTimer({ route, method });
    const done = new Promise<number>((resolve) => {
      res.once("close", () => resolve(res.statusCode));
    }).then((status) => {
      stop();
      httpRequests.inc({ route, method, status: String(status) });
      return status;
    });
    if (!tracingOn()) return handle(req, res);
    void inSpan(
      `${method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": method, "http.route": route, [SERVICE_ATTRIBUTE]: "gateway" },
      },
      async (span) => {
        handle(req, res);
        finish(span, await done);
      },
    );
  };
}

function finish(span: Span | undefined, status: number): void {
  span?.setAttribute("http.response.status_code", status);
  if (status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
}
