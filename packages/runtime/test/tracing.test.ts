import http from "node:http";
import type { AddressInfo } from "node:net";
import { createMemoryBus } from "@avatar/bus";
import { afterEach, describe, expect, it } from "vitest";
import {
  createLogger,
  injectContext,
  inSpan,
  SpanKind,
  startTracing,
  traceBus,
  tracingOn,
} from "../src/index.js";

afterEach(() => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
});

describe("tracing", () => {
  it("is off without OTEL_EXPORTER_OTLP_ENDPOINT: nothing registered, no traceparent sent", async () => {
    const tracing = await startTracing({ serviceName: "test", env: {} });
    expect(tracingOn()).toBe(false);
    const carrier = await inSpan("work", { kind: SpanKind.INTERNAL }, async () => injectContext({}));
    expect(carrier).toEqual({});
    await tracing.shutdown();
  });

  it("exports spans over OTLP/HTTP to the configured endpoint, and bus messages carry traceparent", async () => {
    const posts: { path: string; type: string; bytes: number }[] = [];
    const collector = http.createServer((req, res) => {
      let bytes = 0;
      req.on("data", (c: Buffer) => (bytes += c.length));
      req.on("end", () => {
        posts.push({ path: req.url ?? "", type: String(req.headers["content-type"]), bytes });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const tracing = await startTracing({
      serviceName: "test",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    });
    const bus = createMemoryBus({ logger: () => {} });
    try {
      expect(tracingOn()).toBe(true);
      const traced = traceBus(bus, "test");
      const seen = new Promise<Record<string, string>>((resolve) => {
        traced.subscribe("things.happened", (msg) => resolve(msg.headers));
      });
      const lines: string[] = [];
      const traceId = await inSpan("work", { kind: SpanKind.INTERNAL }, async (span) => {
        traced.publish("things.happened", new Uint8Array([1]));
        createLogger({ sink: (line) => lines.push(line) }).info("inside");
        return span?.spanContext().traceId;
      });
      const headers = await seen;
      expect(headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(JSON.parse(lines[0] ?? "{}").trace_id).toBe(traceId);
      await tracing.shutdown();
      expect(posts.length).toBeGreaterThanOrEqual(1);
      expect(posts[0]?.path).toBe("/v1/traces");
      expect(posts[0]?.bytes).toBeGreaterThan(0);
    } finally {
      await tracing.shutdown();
      await bus.close();
      await new Promise((r) => collector.close(r));
    }
  });
});
