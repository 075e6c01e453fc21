import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";
import { trustedProxiesSetting } from "./http/trusted-proxies.js";

export const gatewaySettings = {
  /** The public address (e.g. https://api.example.com) of every absolute URL the gateway answers. */
  PUBLIC_BASE_URL: env.optionalUrl(),
  /**
   * Without PUBLIC_BASE_URL: the Host headers links may be built from (host or host:port, comma
   * separated); unset, loopback names only. See http/public-url.ts.
   */
  PUBLIC_HOSTS: env.optionalString(),
  /**
   * The proxies in front of the gateway (CIDRs): X-Forwarded-For and X-Forwarded-Proto count only on
   * connections from them.
   */
  TRUSTED_PROXIES: trustedProxiesSetting,
  /** Older form: true trusts every peer's X-Forwarded-* (anyone who reaches the gateway can spoof them). */
  TRUST_PROXY: env.bool({ default: false }),
  /**
   * Requests per second per credential and endpoint (the interface's 10); operators may grant more. The
   * session lifecycle calls keep their own 5 per session token.
   */
  RATE_LIMIT_PER_SECOND: env.int({ default: 10, min: 1, max: 1_000_000 }),
  RATE_LIMIT_STORE_TIMEOUT_MS: env.int({ default: 100, min: 1, max: 5_000 }),
  API_KEY_CACHE_TTL_MS: env.int({ default: 10_000, min: 0, max: 300_000 }),
  /**
   * Failed authentications (invalid API keys or session tokens) per client IP and second, across all
   * replicas; beyond it a key not already known valid is refused with 429 without being looked up.
   */
  AUTH_FAILURES_PER_IP: env.int({ default: 10, min: 1, max: 10_000 }),
  MAX_BODY_BYTES: env.int({ default: 1_048_576, min: 1_024, max: 67_108_864 }),
  /** The largest event WebSocket message; a larger one closes the socket with 1009. */
  WS_MAX_MESSAGE_BYTES: env.int({ default: 1_048_576, min: 1_024, max: 67_108_864 }),
  /** How often an open socket tells its session's worker that it is still there. */
  WS_HEARTBEAT_MS: env.int({ default: 5_000, min: 20, max: 60_000 }),
  /**
   * How long a new socket waits for a worker of its session to acknowledge it, asking again while the
   * session moves between workers (closes 1011 otherwise).
   */
  WS_OPEN_TIMEOUT_MS: env.int({ default: 20_000, min: 50, max: 120_000 }),
  /**
   * Client messages a socket keeps until the session's worker acknowledges them, to send again after a
   * bus outage or a takeover; beyond either limit the oldest are given up and the client is told.
   */
  WS_RESEND_BUFFER_BYTES: env.int({ default: 8_388_608, min: 65_536, max: 268_435_456 }),
  WS_RESEND_BUFFER_MESSAGES: env.int({ default: 1_000, min: 10, max: 100_000 }),
  /** What all sockets of the gateway keep together; beyond it each socket gives up its oldest first. */
  WS_RESEND_BUFFER_TOTAL_BYTES: env.int({ default: 268_435_456, min: 1_048_576, max: 8_589_934_592 }),
  /**
   * The most bytes the gateway's bus connection may hold unsent (a NATS server that is slow or away)
   * for a client message to be relayed; past it messages are kept for resending, not handed on.
   */
  WS_RELAY_MAX_UNSENT_BYTES: env.int({ default: 67_108_864, min: 1_048_576, max: 4_294_967_296 }),
  /** WebSocket ping interval; a client that misses a pong is disconnected. */
  WS_PING_MS: env.int({ default: 30_000, min: 50, max: 600_000 }),
};

export type GatewayConfig = ConfigOf<typeof gatewaySettings>;

export const readGatewayConfig = (source?: Env): GatewayConfig => readConfig(gatewaySettings, source);
