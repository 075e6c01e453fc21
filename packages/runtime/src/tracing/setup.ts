import { trace } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Env } from "../config.js";

/**
 * OpenTelemetry for one process. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test hands in an
 * exporter): then spans go over OTLP/HTTP in batches, W3C `traceparent` travels on Connect and NATS
 * headers, and log lines carry `trace_id`/`span_id`. Off, nothing is registered and every instrumented
 * path checks `tracingOn()` first and does nothing more.
 *
 * The exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout);
 * OTEL_SERVICE_NAME overrides the process's name on its spans.
 */

export interface TracingOptions {
  /** The process's name (`gateway`, `tokens`, `suite`...): the spans' `service.name`. */
  serviceName: string;
  env?: Env;
  /** Export here instead of OTLP, span by span (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
}

export interface Tracing {
  /** Exports what is pending. */
  flush(): Promise<void>;
  /** Flushes, then turns tracing off again. */
  shutdown(): Promise<void>;
}

let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;

export function tracingOn(): boolean {
  return provider !== undefined;
}

export const TRACER_NAME = "avatar";

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

const off: Tracing = { flush: async () => {}, shutdown: async () => {} };

/** Turns tracing on when configured (loading the SDK then); otherwise answers a Tracing that does nothing. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!options.exporter && !endpoint) return off;
  const sdk = await import("./sdk.js");
  if (provider) throw new Error("tracing is already on in this process");
  const current = sdk.registerTracerProvider(env.OTEL_SERVICE_NAME || options.serviceName, options.exporter);
  provider = current;
  return {
    flush: () => current.forceFlush(),
    shutdown: async () => {
      if (provider !== current) return;
      await current.shutdown();
      provider = undefined;
      sdk.unregisterTracerProvider();
    },
  };
}
