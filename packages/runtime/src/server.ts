import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { http1UnaryServer } from "./http1-unary-server.js";
import type { Logger } from "./log.js";
import { meterServedCalls } from "./metrics/connect.js";
import { METRICS_PATH, respondMetrics } from "./metrics/serve.js";
import { requestIdOf, serveRequestId } from "./request-id.js";
import { callersOf } from "./service-callers.js";
import { serviceError } from "./service-errors.js";
import { requireCaller, type ServiceIdentity } from "./service-identity.js";
import { traceServedCalls } from "./tracing/connect.js";

/** What a service's build() returns: its Connect routes plus optional background work. */
export interface ServiceApp {
  readonly name: string;
  routes(router: ConnectRouter): void;
  /** Starts background work (timers, bus consumers) once the server is listening. */
  start?(): Promise<void>;
  /** Stops background work; called after the server stopped taking requests. */
  stop?(): Promise<void>;
  /** Readiness beyond "the process is up", e.g. the database answers. */
  ready?(): Promise<boolean>;
}

/**
 * Unexpected errors are logged with their stack and reach the caller as a bare internal error; a
 * database that cannot be reached is Unavailable (temporary), whichever handler met it, and a value the
 * database refuses to store is the caller's invalid request (400).
 */
function logUnexpected(log: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw serviceError(err, log, req.url, requestIdOf(req.contextValues));
    }
  };
}

/** Every served call: its request id, its trace span, its metrics, and unexpected errors logged. */
export function connectInterceptors(log: Logger, service: string): Interceptor[] {
  return [serveRequestId, traceServedCalls(service), meterServedCalls(service), logUnexpected(log)];
}

/**
 * The request handler of a service: Connect on its routes (http1-unary-server.ts), /healthz, /readyz and /metrics beside them
 * (a service's port is internal; the public gateway never forwards to it). Every call must carry a
 * service credential of a caller the RPC allows (`identity` verifies it).
 */
export function serviceHandler(
  app: ServiceApp,
  log: Logger,
  identity: ServiceIdentity,
): http.RequestListener {
  const [requestId, ...rest] = connectInterceptors(log, app.name);
  return http1UnaryServer({
    routes: (router) => app.routes(router),
    interceptors: [...(requestId ? [requestId] : []), requireCaller(identity, callersOf, log), ...rest],
    fallback: (req, res) => {
      const path = req.url?.split("?")[0];
      if (path === "/healthz") return void respondHealth(res, true);
      if (path === METRICS_PATH) return respondMetrics(res);
      if (path === "/readyz") {
        void (app.ready ? app.ready().catch(() => false) : Promise.resolve(true)).then((ok) =>
          respondHealth(res, ok),
        );
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "not found" }));
    },
  });
}

interface PlainResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

function respondHealth(res: PlainResponse, ok: boolean): void {
  res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
  res.end(JSON.stringify({ status: ok ? "ok" : "unavailable" }));
}

export interface Listening {
  server: http.Server;
  port: number;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Listens before the handler exists, so that services of one process can learn each other's ports
 * before they are built. Requests that arrive before `setHandler` get 503.
 */
export async function listen(options: {
  port: number;
  host: string;
}): Promise<Listening & { setHandler(handler: http.RequestListener): void }> {
  let handler: http.RequestListener = (_req, res) => {
    res.writeHead(503).end();
  };
  const server = http.createServer((req, res) => handler(req, res));
  server.keepAliveTimeout = 65_000;
  trackResponses(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    server,
    port,
    url: `http://${host}:${port}`,
    setHandler: (h) => {
      handler = h;
    },
    close: (graceMs = 10_000) => closeGracefully(server, graceMs),
  };
}

/** Responses still being written, per server, so that closing can end their connections after them. */
const inFlight = new WeakMap<http.Server, Set<http.ServerResponse>>();

/** Lets closeGracefully reach the responses in flight when it is called (listen() does this). */
export function trackResponses(server: http.Server): void {
  const active = new Set<http.ServerResponse>();
  inFlight.set(server, active);
  server.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    active.add(res);
    res.once("close", () => active.delete(res));
  });
}

/**
 * Stops accepting, lets in-flight requests finish (up to graceMs), then closes every connection.
 * Keep-alive connections outlive server.close() and would go on serving new requests on them: every
 * response from now on says `Connection: close`, and connections are closed as soon as they turn idle.
 */
export function closeGracefully(server: http.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    const endConnectionAfter = (res: http.ServerResponse) => {
      if (!res.headersSent) res.shouldKeepAlive = false;
      res.once("finish", () => setImmediate(() => server.closeIdleConnections()));
    };
    const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) => endConnectionAfter(res);
    for (const res of inFlight.get(server) ?? []) endConnectionAfter(res);
    server.on("request", onRequest);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      server.off("request", onRequest);
      resolve();
    });
    server.closeIdleConnections();
  });
}
