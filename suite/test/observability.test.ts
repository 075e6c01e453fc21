import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startTracing, type Tracing } from "@avatar/runtime";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatCompletionsServer } from "../../packages/providers/test/servers/chat-completions-server.js";
import { EventClient } from "./realtime-client.js";
import { start, stopSession } from "./realtime-support.js";
import { eventually, grant, key, mint } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * What an operator and a customer see of one FULL sandbox session, end to end in one process: the
 * traces of its mint and start (in-memory exporter), its turn's `session.turn_metrics`, a signed
 * `session.ended` webhook to a receiver on loopback, and the metrics scraped afterwards.
 */

let suite: TestSuite;
let tracing: Tracing;
const spans = new InMemorySpanExporter();
let chat: ChatCompletionsServer;
let receiver: http.Server;
let receiverUrl: string;
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  tracing = await startTracing({ serviceName: "suite", exporter: spans });
  chat = await ChatCompletionsServer.start();
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  suite = await startTestSuite({
    env: { LOCAL_LLM_URL: chat.baseUrl, WEBHOOKS_ALLOW_LOOPBACK: "true", WEBHOOKS_TICK_MS: "50" },
    overrides: { metricsPort: 0 },
  });
  await grant(suite, "100");
}, 120_000);

afterAll(async () => {
  await suite?.stop();
  await tracing?.shutdown();
  await chat?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

const serviceOf = (s: ReadableSpan) => String(s.attributes["avatar.service"] ?? "");

/** The spans of the trace whose root is the gateway's span for `route`. */
function traceOf(route: string): ReadableSpan[] {
  const root = spans.getFinishedSpans().find((s) => s.name === route);
  expect(root, `no span ${route}`).toBeDefined();
  const traceId = root?.spanContext().traceId;
  return spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

/** Every span's parent is in the trace too (one connected tree), except the root's. */
function expectConnected(trace: ReadableSpan[]) {
  const ids = new Set(trace.map((s) => s.spanContext().spanId));
  const orphans = trace.filter((s) => s.parentSpanContext && !ids.has(s.parentSpanContext.spanId));
  expect(orphans.map((s) => s.name)).toEqual([]);
  expect(trace.filter((s) => !s.parentSpanContext)).toHaveLength(1);
}

describe("observing a FULL sandbox session", () => {
  it("traces mint and start across services, measures the turn, signs the webhook and counts it all", async () => {
    const registered = await suite.request("POST", "/v1/webhooks", {
      headers: key(suite.apiKey),
      body: { url: receiverUrl, event_types: ["session.ended"], description: "test receiver" },
    });
    const webhook = (await json(registered)).data;
    expect(registered.status, JSON.stringify(webhook)).toBe(200);
    expect(webhook.secret).toMatch(/^whsec_/);

    const minted = await mint(suite, { is_sandbox: true, max_session_duration: 600 });
    const { ws_url } = await start(suite, minted.session_token);

    // ---- traces: gateway -> tokens -> sessions for the mint; gateway -> sessions -> bus -> pipeline for the start
    await eventually(async () => {
      const mintTrace = traceOf("POST /v1/sessions/token");
      for (const service of ["gateway", "tokens", "sessions"])
        expect(mintTrace.map(serviceOf)).toContain(service);
      expectConnected(mintTrace);
      const startTrace = traceOf("POST /v1/sessions/start");
      for (const service of ["gateway", "sessions", "pipeline"])
        expect(startTrace.map(serviceOf)).toContain(service);
      expect(startTrace.map((s) => s.name)).toContain("avatar.sessions.v1.SessionsService/StartSession");
      expectConnected(startTrace);
    }, 10_000);

    // ---- the turn: avatar.say through the local model, then speech
    const client = await EventClient.connect(ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");
    chat.enqueue({ kind: "stream", pieces: ["Hello ", "from the model."] });
    client.send({ type: "avatar.say", event_id: "say1", text: "Say hello." });
    await client.next("avatar.speak_started", (e) => e.source_event_id === "say1", 30_000);
    const metrics = await client.next("session.turn_metrics", (e) => e.source_event_id === "say1", 30_000);
    expect(metrics).toMatchObject({
      trigger: "avatar.say",
      interrupted: false,
      session_id: minted.session_id,
    });
    const latency = metrics.latency_ms;
    expect(latency.final_transcript).toBeNull();
    expect(latency.first_mouth_open_frame).toBeNull(); // no video is rendered here
    expect(latency.first_llm_token).toBeGreaterThanOrEqual(0);
    expect(latency.first_audio).toBeGreaterThanOrEqual(latency.first_llm_token);
    // The reference point is the avatar.say's arrival (epoch ms, the session's clock).
    expect(Math.abs(metrics.started_at - Date.now())).toBeLessThan(60_000);
    // Kept among the session's events.
    const stored = await eventually(async () => {
      const { events } = await suite.clients.sessions.listSessionEvents({
        spaceId: suite.spaceId,
        sessionId: minted.session_id,
      });
      const found = events.find((e) => e.type === "session.turn_metrics");
      expect(found).toBeDefined();
      return found;
    });
    expect(stored?.payload).toMatchObject({ turn_id: metrics.turn_id, latency_ms: latency });

    // ---- the webhook: session.ended with its end reason, signed
    await stopSession(suite, minted.session_token);
    await client.next("session.stopped");
    const hook = await eventually(async () => {
      const found = received.find((r) => JSON.parse(r.body).type === "session.ended");
      expect(found).toBeDefined();
      return found as (typeof received)[number];
    });
    const body = JSON.parse(hook.body);
    expect(body.data).toMatchObject({
      session_id: minted.session_id,
      end_reason: "USER_CLOSED",
      is_sandbox: true,
    });
    const id = String(hook.headers["webhook-id"]);
    const timestamp = String(hook.headers["webhook-timestamp"]);
    const keyBytes = Buffer.from(String(webhook.secret).slice("whsec_".length), "base64");
    const expected = createHmac("sha256", keyBytes)
      .update(`${id}.${timestamp}.${hook.body}`)
      .digest("base64");
    expect(String(hook.headers["webhook-signature"]).split(" ")).toContain(`v1,${expected}`);
    const log = await eventually(async () => {
      const res = await suite.get(`/v1/webhooks/${webhook.id}/deliveries`, key(suite.apiKey));
      const data = (await json(res)).data;
      expect(data.results[0]?.status).toBe("delivered");
      return data;
    });
    expect(log.results[0]).toMatchObject({ webhook_id: id, event_type: "session.ended" });

    // ---- metrics: scraped on their own port; the public gateway does not serve them
    expect((await suite.get("/metrics")).status).toBe(404);
    // A preflight is counted under the route it asks about.
    const preflight = await suite.request("OPTIONS", `/v1/sessions/${minted.session_id}`, {
      headers: { Origin: "https://customer.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBe(204);
    const scrape = await (await fetch(suite.metricsUrl ?? "")).text();
    const series = (name: string, labels: Record<string, string>) =>
      scrape
        .split("\n")
        .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
        .map((line) => Number(line.split(" ").at(-1)));
    const atLeastOne = (name: string, labels: Record<string, string> = {}) =>
      expect(
        Math.max(0, ...series(name, labels)),
        `${name} ${JSON.stringify(labels)}`,
      ).toBeGreaterThanOrEqual(1);
    atLeastOne("avatar_http_requests_total", { route: "/v1/sessions/token", method: "POST", status: "200" });
    atLeastOne("avatar_http_request_duration_seconds_count", { route: "/v1/sessions/start", method: "POST" });
    atLeastOne("avatar_http_requests_total", { route: "unmatched", method: "GET", status: "404" });
    atLeastOne("avatar_http_requests_total", {
      route: "/v1/sessions/{session_id}",
      method: "OPTIONS",
      status: "204",
    });
    atLeastOne("avatar_rate_limit_decisions_total", {
      endpoint: "POST /v1/sessions/token",
      decision: "allowed",
    });
    atLeastOne("avatar_rpc_server_requests_total", {
      service: "sessions",
      procedure: "avatar.sessions.v1.SessionsService/StartSession",
      code: "ok",
    });
    // The gateway's mints go to the tokens service in batches (api/token-mints.ts).
    atLeastOne("avatar_rpc_client_requests_total", {
      procedure: "avatar.tokens.v1.TokensService/MintSessionTokensBatch",
    });
    atLeastOne("avatar_sessions_started_total", { mode: "FULL" });
    atLeastOne("avatar_sessions_ended_total", { mode: "FULL", end_reason: "USER_CLOSED" });
    atLeastOne("avatar_bus_published_total", {
      service: "sessions",
      kind: "durable",
      subject: "events.sessions.started",
    });
    atLeastOne("avatar_bus_consumed_total", {
      service: "webhooks",
      kind: "durable",
      subject: "events.sessions.ended",
    });
    atLeastOne("avatar_bus_consume_lag_seconds_count", { service: "webhooks" });
    atLeastOne("avatar_pipeline_assignments_total", { outcome: "claimed" });
    atLeastOne("avatar_pipeline_capacity");
    atLeastOne("avatar_ws_connections_opened_total");
    atLeastOne("avatar_turn_latency_seconds_count", { mode: "FULL", stage: "first_audio" });
    atLeastOne("avatar_turn_latency_seconds_count", { mode: "FULL", stage: "first_llm_token" });
    atLeastOne("avatar_webhook_attempts_total", { event_type: "session.ended", outcome: "delivered" });
    atLeastOne("avatar_db_pool_connections", { service: "sessions", state: "total" });
    atLeastOne("avatar_db_pipeline", { service: "sessions", state: "connections" });
    expect(series("avatar_outbox_depth", { service: "sessions" })).toHaveLength(1);
    expect(series("avatar_sessions", { state: "STARTED" }).every((n) => n >= 0)).toBe(true);
    expect(scrape).toContain("process_cpu_user_seconds_total");
    expect(scrape).toContain("# TYPE avatar_renderer_frame_seconds histogram");
  }, 120_000);
});
