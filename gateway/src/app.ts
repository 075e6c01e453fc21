import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Bus } from "@avatar/bus";
import {
  type Clients,
  type Logger,
  onApiKeyRevoked,
  rateLimitDecisions,
  requestIdFrom,
} from "@avatar/runtime";
import { ApiKeyAuthenticator } from "./auth/api-keys.js";
import { type Authenticators, authenticate } from "./auth/authenticate.js";
import { presentedCredentials, rateLimitIdentity } from "./auth/credentials.js";
import { AuthFailureBudget, ClientFailures } from "./auth/failure-budget.js";
import { SessionTokenVerifier } from "./auth/session-tokens.js";
import type { GatewayConfig } from "./config.js";
import { withCachedEmbeds } from "./embed/embed-cache.js";
import { corsHeaders } from "./http/cors.js";
import { failure, success } from "./http/envelope.js";
import { HttpError, rateLimited, toHttpError } from "./http/http-error.js";
import { parseRequest } from "./http/parse-request.js";
import { parsePublicHosts, publicBaseUrl, requestIsHttps } from "./http/public-url.js";
import { GatewayRequestContext, type SharedContext } from "./http/request-context.js";
import { requestUrl } from "./http/request-url.js";
import { sendJson, sendRaw } from "./http/respond.js";
import type { CorsOrigins, Principal, Route } from "./http/route.js";
import { type Match, type RouteLookup, Router } from "./http/router.js";
import { proxyTrust } from "./http/trusted-proxies.js";
import { limitOf } from "./limits.js";
import { observeRequest, routeLabel } from "./observe/requests.js";
import {
  type CounterStore,
  MemoryCounterStore,
  openKvCounterStore,
  RateLimiter,
  rateLimitHeaders,
  setRateLimitHeaders,
} from "./ratelimit/index.js";
import { validationErrorBody } from "./schema/issues.js";

export interface GatewayDeps {
  clients: Clients;
  bus: Bus;
  log: Logger;
  config: GatewayConfig;
  routes: Route[];
  /** Overrides the counter store (tests); otherwise NATS KV when the bus is NATS, memory otherwise. */
  rateLimitStore?: CounterStore;
  now?: () => number;
}

export interface Gateway {
  handle: RequestListener;
  authenticators: Authenticators;
  /** Shared with the event WebSocket's upgrades (counted per client IP like other anonymous requests). */
  limiter: RateLimiter;
  /** Stops listening to the bus. */
  close(): Promise<void>;
}

/** Builds the public HTTP surface: request id, CORS, routing, rate limit, auth, validation, envelope. */
export async function build(deps: GatewayDeps): Promise<Gateway> {
  const { config, log } = deps;
  const trust = proxyTrust(config);
  if (config.TRUST_PROXY && !config.TRUSTED_PROXIES.any) {
    log.warn(
      "TRUST_PROXY=true trusts X-Forwarded-For from anyone: set TRUSTED_PROXIES to your proxies' CIDRs",
    );
  }
  const router = new Router(deps.routes);
  const publicHosts = parsePublicHosts(config.PUBLIC_HOSTS);
  if (!config.PUBLIC_BASE_URL && publicHosts.length === 0) {
    log.warn("neither PUBLIC_BASE_URL nor PUBLIC_HOSTS is set: links are built for localhost only");
  }
  const limiter = new RateLimiter({
    store:
      deps.rateLimitStore ??
      (deps.bus.kind === "nats" ? await openKvCounterStore(deps.bus) : new MemoryCounterStore()),
    logger: log,
    storeTimeoutMs: config.RATE_LIMIT_STORE_TIMEOUT_MS,
    isAvailable: () => deps.bus.status() === "connected",
    onDecision: (endpoint, d) =>
      rateLimitDecisions.inc({
        endpoint,
        decision: d.failedOpen ? "failed_open" : d.allowed ? "allowed" : "rejected",
      }),
    ...(deps.now ? { now: deps.now } : {}),
  });
  const authenticators: Authenticators = {
    apiKeys: new ApiKeyAuthenticator(deps.clients.tokens, { ttlMs: config.API_KEY_CACHE_TTL_MS }),
    sessionTokens: new SessionTokenVerifier(deps.clients.tokens),
  };
  // Revocations reach every replica over the bus: the key stops authenticating here at once.
  const revocations = onApiKeyRevoked(deps.bus, (r) => authenticators.apiKeys.revoke(r.apiKeyId));
  const failures = new AuthFailureBudget(limiter, config.AUTH_FAILURES_PER_IP, deps.now);
  const clients = withCachedEmbeds(deps.clients, deps.bus);
  /** A route's own CORS origins (an embed's); none when they cannot be read, so no origin is allowed. */
  const allowedOrigins = (cors: CorsOrigins, params: Record<string, string>) =>
    cors(params, clients).catch((err: unknown) => {
      log.warn("could not read a route's allowed origins", { err });
      return [];
    });

  const shared: SharedContext = {
    clients,
    bus: deps.bus,
    log,
    baseUrl: (req) => publicBaseUrl(req, config, publicHosts, trust),
    https: (req) => requestIsHttps(req, trust),
    apiKeyRevoked: (apiKeyId) => authenticators.apiKeys.isRevoked(apiKeyId),
  };

  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    headers: Record<string, string>,
    url: URL,
    method: string,
    found: RouteLookup<Route>,
  ) {
    if (method === "OPTIONS") {
      const cors = found.kind === "found" ? found.match.route.cors : undefined;
      if (found.kind === "found" && cors) {
        const allowed = cors === true ? undefined : await allowedOrigins(cors, found.match.params);
        return sendRaw(res, 204, null, Object.assign(headers, corsHeaders(req, true, allowed)));
      }
      headers.Allow = "GET, POST, PATCH, DELETE, OPTIONS";
      return sendRaw(res, 204, null, headers);
    }

    // Readiness for orchestrators: not a public operation, so neither limited nor enveloped.
    if (url.pathname === "/readyz" && method === "GET") {
      return sendJson(res, 200, { status: "ok" }, headers);
    }

    if (found.kind === "not_found") throw new HttpError(404, "Not Found");
    if (found.kind === "method_not_allowed") {
      throw new HttpError(405, "Method Not Allowed", undefined, { Allow: found.allow.join(", ") });
    }
    const { route } = found.match;
    try {
      await serveRoute(req, res, requestId, headers, url, found.match);
    } catch (err) {
      if (!route.errors) throw err;
      // The caller sees a rewritten answer; what actually happened goes to the log.
      const original = toHttpError(err);
      const request = { method, path: url.pathname, request_id: requestId };
      if (original.status >= 500) log.error("request failed", { ...request, err });
      else log.info("request refused", { ...request, status: original.status, detail: original.message });
      throw route.errors(err);
    }
  }

  async function serveRoute(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    headers: Record<string, string>,
    url: URL,
    { route, params, endpoint }: Match<Route>,
  ) {
    if (route.cors === true) Object.assign(headers, corsHeaders(req, false));
    else if (route.cors && req.headers.origin) {
      // Only a browser's request (it names its origin) needs the route's own list of origins.
      const allowed = await allowedOrigins(route.cors, params);
      Object.assign(headers, corsHeaders(req, false, allowed));
    }

    // Who is asking is settled first, so the limit counts only verified credentials; anything else
    // (none, junk, expired) counts against the client IP, whose failures also have a budget. Checking a
    // credential changes nothing, and the limit is still decided before the operation does anything.
    const credentials = presentedCredentials(req, trust);
    let principal: Principal | undefined;
    let authError: unknown;
    try {
      principal = await authenticate(
        route.auth,
        credentials,
        authenticators,
        new ClientFailures(failures, credentials.clientIp),
      );
    } catch (err) {
      if (err instanceof HttpError && err.status === 429) throw err;
      authError = err;
    }
    const decision = await limiter.hit({
      credential: rateLimitIdentity(principal, credentials),
      endpoint,
      limit: limitOf(route.rateLimit, config.RATE_LIMIT_PER_SECOND),
    });
    setRateLimitHeaders(headers, decision);
    if (!decision.allowed) throw rateLimited(rateLimitHeaders(decision));
    if (authError !== undefined || !principal) throw authError;

    const parsed = await parseRequest(route, req, params, url.searchParams, config.MAX_BODY_BYTES);
    if (!parsed.ok) return sendJson(res, 422, validationErrorBody(parsed.issues), headers);

    const context = new GatewayRequestContext(shared, req, principal, parsed.value, url, requestId);
    const result = await route.handle(context);
    if (context.cookies) res.setHeader("Set-Cookie", context.cookies);
    if (result.headers) Object.assign(headers, result.headers);
    const status = result.status ?? route.status ?? 200;
    if (result.raw !== undefined) return sendRaw(res, status, result.raw, headers);
    return sendJson(res, status, success(result.data ?? null, result.message), headers);
  }

  const handle: RequestListener = (req, res) => {
    const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
    const headers: Record<string, string> = {
      "X-Request-Id": requestId,
      "X-Content-Type-Options": "nosniff",
    };
    const method = (req.method ?? "GET").toUpperCase();
    const url = requestUrl(req);
    // A preflight is answered for the route and method it asks about.
    const target =
      method === "OPTIONS"
        ? ((req.headers["access-control-request-method"] as string | undefined)?.toUpperCase() ?? "POST")
        : method;
    const found: RouteLookup<Route> = url ? router.lookup(target, url.pathname) : { kind: "not_found" };
    observeRequest(res, routeLabel(found), method, () => {
      const served = url
        ? serve(req, res, requestId, headers, url, method, found)
        : Promise.reject(new HttpError(400, "Bad request"));
      served.catch((err: unknown) => {
        const e = toHttpError(err);
        if (e.status >= 500) {
          log.error("request failed", { method: req.method, path: req.url, request_id: requestId, err });
        }
        Object.assign(headers, e.headers);
        if (e.status === 422 && e.issues) {
          const issues = e.issues.map((i) => ({ ...i, input: i.input ?? null }));
          return sendJson(res, 422, validationErrorBody(issues), headers);
        }
        sendJson(res, e.status, { ...failure(e.status, e.message), ...e.fields }, headers);
      });
    });
  };

  return {
    handle,
    authenticators,
    limiter,
    close: () => revocations.unsubscribe(),
  };
}
