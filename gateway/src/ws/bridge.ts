import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Bus } from "@avatar/bus";
import { SessionEndedSchema } from "@avatar/contracts/sessions";
import {
  type Clients,
  endReasonFromProto,
  type Logger,
  TurnPublisher,
  topics,
  wsConnections,
  wsConnectionsOpened,
} from "@avatar/runtime";
import { fromBinary } from "@bufbuild/protobuf";
import { WebSocketServer } from "ws";
import { presentedCredentials, rateLimitIdentity } from "../auth/credentials.js";
import type { GatewayConfig } from "../config.js";
import { toHttpError } from "../http/http-error.js";
import { endWithError } from "../http/raw-response.js";
import { requestUrl } from "../http/request-url.js";
import { proxyTrust } from "../http/trusted-proxies.js";
import { limitOf } from "../limits.js";
import { type RateLimiter, rateLimitHeaders } from "../ratelimit/index.js";
import { ClientSocket } from "./client-socket.js";
import { relayFits } from "./message-frame.js";
import { ResendBudget } from "./outbound-messages.js";
import { redeemTicket } from "./ticket.js";

export const EVENTS_PATH = "/v1/sessions/ws";
/** How long the worker has to tell a socket about the session's end before the gateway does. */
const WORKER_END_GRACE_MS = 2_000;

export interface BridgeDeps {
  clients: Clients;
  bus: Bus;
  log: Logger;
  config: GatewayConfig;
  limiter: RateLimiter;
}

export interface RealtimeBridge {
  /** Closes every event socket (1001) and stops taking new ones. */
  close(): Promise<void>;
}

/**
 * The event WebSocket at ws_url (`/v1/sessions/ws?ticket=...`): the upgrade is rate limited like any
 * request without credentials (per client IP), the single-use ticket is redeemed through the sessions
 * service before the handshake completes (401 unknown/used/expired, 409 ended session), and each
 * accepted socket is relayed over the bus to the session's pipeline worker (ClientSocket).
 */
export function attachRealtimeBridge(server: Server, deps: BridgeDeps): RealtimeBridge {
  // maxPayload: a larger message closes the socket with 1009 (Message Too Big).
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.config.WS_MAX_MESSAGE_BYTES });
  const resendBudget = new ResendBudget(deps.config.WS_RESEND_BUFFER_TOTAL_BYTES);
  const publisher = new TurnPublisher(deps.bus, deps.log, {
    what: "client frames",
    maxUnsentBytes: deps.config.WS_RELAY_MAX_UNSENT_BYTES,
  });
  if (!relayFits(deps.config.WS_MAX_MESSAGE_BYTES, deps.bus.maxPayload())) {
    // Checked here rather than enforced: the limit belongs to the NATS server's configuration.
    deps.log.warn("the bus cannot carry the largest event-socket message; raise NATS max_payload", {
      wsMaxMessageBytes: deps.config.WS_MAX_MESSAGE_BYTES,
      busMaxPayload: deps.bus.maxPayload(),
    });
  }
  const sockets = new Set<ClientSocket>();
  let closing = false;
  // A session's end reaches its sockets from the worker; this covers a worker that died with it.
  const ended = deps.bus.subscribe(topics.sessionEnded.subject, (msg) => {
    const { session } = fromBinary(SessionEndedSchema, msg.data);
    if (!session) return;
    for (const s of sockets) {
      if (s.sessionId === session.id)
        s.sessionEnded(endReasonFromProto(session.endReason) ?? "UNKNOWN", WORKER_END_GRACE_MS);
    }
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const url = requestUrl(req);
    if (!url) return endWithError(socket, 400, "Bad request");
    if (url.pathname !== EVENTS_PATH) return endWithError(socket, 404, "Not Found");
    if (closing) return endWithError(socket, 503, "Service temporarily unavailable");
    if (!isWebSocketHandshake(req)) return endWithError(socket, 400, "Expected a WebSocket handshake");

    // The upgrade takes no credential but its ticket: whatever headers it carries, it counts per IP.
    const credentials = presentedCredentials(req, proxyTrust(deps.config));
    const decision = await deps.limiter.hit({
      credential: rateLimitIdentity(undefined, credentials),
      endpoint: `GET ${EVENTS_PATH}`,
      limit: limitOf("default", deps.config.RATE_LIMIT_PER_SECOND),
    });
    if (!decision.allowed) {
      return endWithError(socket, 429, "Rate limit exceeded", rateLimitHeaders(decision));
    }

    let sessionId: string;
    try {
      sessionId = (await redeemTicket(deps.clients.sessions, url.searchParams.get("ticket") ?? "")).id;
    } catch (err) {
      const e = toHttpError(err);
      if (e.status >= 500) deps.log.error("event socket refused", { err });
      return endWithError(socket, e.status, e.message);
    }
    if (socket.destroyed) return;

    wss.handleUpgrade(req, socket, head, (ws) => {
      const client = new ClientSocket(ws, sessionId, {
        bus: deps.bus,
        log: deps.log,
        heartbeatMs: deps.config.WS_HEARTBEAT_MS,
        openTimeoutMs: deps.config.WS_OPEN_TIMEOUT_MS,
        pingMs: deps.config.WS_PING_MS,
        resendLimits: {
          maxBytes: deps.config.WS_RESEND_BUFFER_BYTES,
          maxCount: deps.config.WS_RESEND_BUFFER_MESSAGES,
          shared: resendBudget,
        },
        transport: socket,
        publisher,
      });
      sockets.add(client);
      wsConnections.inc();
      wsConnectionsOpened.inc();
      ws.once("close", () => {
        sockets.delete(client);
        wsConnections.dec();
      });
      void client.start();
    });
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      deps.log.error("event socket upgrade failed", { err });
      endWithError(socket, 500, "Internal server error");
    });
  };
  server.on("upgrade", onUpgrade);

  return {
    async close() {
      closing = true;
      server.off("upgrade", onUpgrade);
      await ended.unsubscribe();
      for (const s of sockets) s.shutdown();
      const deadline = Date.now() + 2_000;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      // The sockets' last frames (CLOSED), before the bus closes.
      publisher.flush();
    },
  };
}

/** The headers every WebSocket handshake carries; checked before the single-use ticket is spent. */
function isWebSocketHandshake(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade?.toLowerCase();
  const version = req.headers["sec-websocket-version"];
  return (
    req.method === "GET" &&
    upgrade === "websocket" &&
    typeof req.headers["sec-websocket-key"] === "string" &&
    (version === "13" || version === "8")
  );
}
