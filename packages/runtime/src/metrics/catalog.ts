import { Counter, Gauge, Histogram } from "prom-client";
import { metricsRegistry } from "./registry.js";
import { sampledGauge } from "./sampled.js";
import { talliedCounter } from "./tallied.js";

/**
 * Every metric the suite exports: names, labels and buckets in one place. Instrumentation (interceptors,
 * wrappers, the few domain counters) imports the objects from here; nothing else creates metrics.
 * All names start with `avatar_`; durations are seconds. The README's "Metrics" table lists them.
 */

const registers = [metricsRegistry];

/** Request-scale latencies: 5 ms to 10 s. */
export const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Conversation latencies (a turn's stages): 50 ms to 10 s. */
export const TURN_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
/** One rendered video frame; the budget at 25 fps is 40 ms. */
export const FRAME_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.06, 0.1, 0.25];
/** Time an event spent on the bus before its consumer took it: 1 ms to 5 min. */
export const BUS_LAG_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 300];

// ---- the public HTTP surface (gateway) ----

export const httpRequests = new Counter({
  name: "avatar_http_requests_total",
  help: "Public HTTP requests, by route pattern (path parameters left as {name}), method and status",
  labelNames: ["route", "method", "status"] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: "avatar_http_request_duration_seconds",
  help: "Public HTTP request latency until the response was written",
  labelNames: ["route", "method"] as const,
  buckets: REQUEST_BUCKETS,
  registers,
});

export const rateLimitDecisions = new Counter({
  name: "avatar_rate_limit_decisions_total",
  help: "Rate-limit decisions: allowed, rejected (429), or failed_open (the counter store was unavailable)",
  labelNames: ["endpoint", "decision"] as const,
  registers,
});

export const wsConnections = new Gauge({
  name: "avatar_ws_connections",
  help: "Event WebSockets open on this gateway",
  registers,
});

export const wsConnectionsOpened = new Counter({
  name: "avatar_ws_connections_opened_total",
  help: "Event WebSockets accepted by this gateway",
  registers,
});

export const wsMessagesResent = new Counter({
  name: "avatar_ws_messages_resent_total",
  help: "Client messages a gateway sent to the session's worker again: overdue (nothing acknowledged for a resend interval), asked (the worker found a gap), held (held back by a backlogged bus, sent once it caught up)",
  labelNames: ["reason"] as const,
  registers,
});

// ---- Connect between services ----

export const rpcServerRequests = new Counter({
  name: "avatar_rpc_server_requests_total",
  help: "Connect calls served, by service, procedure and Connect code (ok when it succeeded)",
  labelNames: ["service", "procedure", "code"] as const,
  registers,
});

export const rpcServerDuration = new Histogram({
  name: "avatar_rpc_server_duration_seconds",
  help: "Connect call latency as served",
  labelNames: ["service", "procedure"] as const,
  buckets: REQUEST_BUCKETS,
  registers,
});

export const rpcClientRequests = new Counter({
  name: "avatar_rpc_client_requests_total",
  help: "Connect calls made to other services, by procedure and Connect code",
  labelNames: ["procedure", "code"] as const,
  registers,
});

export const rpcClientDuration = new Histogram({
  name: "avatar_rpc_client_duration_seconds",
  help: "Connect call latency as the caller saw it",
  labelNames: ["procedure"] as const,
  buckets: REQUEST_BUCKETS,
  registers,
});

// ---- the bus ----

// Tallied: counted for every message, realtime frames included.
export const busPublished = talliedCounter({
  name: "avatar_bus_published_total",
  help: "Messages published on the bus (kind: core, request, durable); ids in subjects are shown as *",
  labelNames: ["service", "kind", "subject"] as const,
  registers,
});

export const busConsumed = talliedCounter({
  name: "avatar_bus_consumed_total",
  help: "Messages handled from the bus (kind: core, serve, durable), by outcome (ok, error)",
  labelNames: ["service", "kind", "subject", "outcome"] as const,
  registers,
});

export const busConsumeLag = new Histogram({
  name: "avatar_bus_consume_lag_seconds",
  help: "Durable events: time from publication to the start of their handling (redeliveries included)",
  labelNames: ["service", "subject"] as const,
  buckets: BUS_LAG_BUCKETS,
  registers,
});

// ---- storage ----

export const outboxDepth = sampledGauge({
  name: "avatar_outbox_depth",
  help: "Events written to a service's outbox and not yet published on the bus",
  labelNames: ["service"] as const,
  registers,
});

export const dbPoolConnections = sampledGauge({
  name: "avatar_db_pool_connections",
  help: "Postgres pool connections of a service: total, idle, and callers waiting for one",
  labelNames: ["service", "state"] as const,
  registers,
});

export const dbPipeline = sampledGauge({
  name: "avatar_db_pipeline",
  help: "A service's pipelined Postgres connections for standalone statements: open connections, and statements sent or waiting on them",
  labelNames: ["service", "state"] as const,
  registers,
});

// ---- sessions and credits ----

export const sessionsByState = sampledGauge({
  name: "avatar_sessions",
  help: "Sessions not ended, by state (CREATED, STARTED) and mode; counted from the database (use max() across replicas)",
  labelNames: ["state", "mode"] as const,
  registers,
});

export const sessionsStarted = new Counter({
  name: "avatar_sessions_started_total",
  help: "Sessions that started, by mode",
  labelNames: ["mode"] as const,
  registers,
});

export const sessionsEnded = new Counter({
  name: "avatar_sessions_ended_total",
  help: "Sessions that ended, by mode and end reason",
  labelNames: ["mode", "end_reason"] as const,
  registers,
});

export const creditsCharged = new Counter({
  name: "avatar_credits_charged_total",
  help: "Credits charged for session minutes",
  registers,
});

// ---- pipeline workers ----

export const pipelineCapacity = sampledGauge({
  name: "avatar_pipeline_capacity",
  help: "Sessions this pipeline worker may run at once (PIPELINE_CAPACITY)",
  labelNames: ["worker"] as const,
  registers,
});

export const pipelineSessions = sampledGauge({
  name: "avatar_pipeline_sessions",
  help: "Sessions this pipeline worker runs now",
  labelNames: ["worker"] as const,
  registers,
});

export const pipelineAssignments = new Counter({
  name: "avatar_pipeline_assignments_total",
  help: "Assignment requests answered by this worker: claimed, full (no room or stopping), refused (not startable)",
  labelNames: ["outcome"] as const,
  registers,
});

export const providerErrors = new Counter({
  name: "avatar_provider_errors_total",
  help: "Provider failures reported to a session, by provider and kind (rate_limited, unauthorized, bad_request, unavailable)",
  labelNames: ["provider", "kind"] as const,
  registers,
});

// ---- per-turn latency (session.turn_metrics) ----

export const turnLatency = new Histogram({
  name: "avatar_turn_latency_seconds",
  help: "A turn's stages, each from the turn's start (end of user speech, or the client event): final_transcript, first_llm_token, first_audio, first_mouth_open_frame",
  labelNames: ["mode", "stage"] as const,
  buckets: TURN_BUCKETS,
  registers,
});

// ---- the renderer (fed by the media code) ----

export const rendererFrameTime = new Histogram({
  name: "avatar_renderer_frame_seconds",
  help: "Time to render one video frame (budget: 0.04 s at 25 fps)",
  labelNames: ["quality"] as const,
  buckets: FRAME_BUCKETS,
  registers,
});

export const rendererDroppedFrames = new Counter({
  name: "avatar_renderer_dropped_frames_total",
  help: "Video frames not delivered on time, by where it fell behind the 25 fps clock: render (skipped by the renderer, counted as it happens) or encode (dropped by the encoder, counted when the session's media stops)",
  labelNames: ["quality", "stage"] as const,
  registers,
});

// ---- webhooks ----

export const webhookDeliveries = new Counter({
  name: "avatar_webhook_attempts_total",
  help: "Webhook delivery attempts, by event type and outcome (delivered, failed, refused: target not allowed)",
  labelNames: ["event_type", "outcome"] as const,
  registers,
});

export const webhookDeliveryDuration = new Histogram({
  name: "avatar_webhook_attempt_duration_seconds",
  help: "Webhook delivery attempt latency, until the receiver answered or the attempt failed",
  buckets: REQUEST_BUCKETS,
  registers,
});

export const webhookEndpointsDisabled = new Counter({
  name: "avatar_webhook_endpoints_disabled_total",
  help: "Webhook endpoints disabled after failing for WEBHOOKS_DISABLE_AFTER_MS",
  registers,
});

export const webhookBacklog = sampledGauge({
  name: "avatar_webhook_pending_deliveries",
  help: "Webhook deliveries waiting for their next attempt (use max() across replicas)",
  registers,
});
