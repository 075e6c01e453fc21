import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";

/**
 * The OpenTelemetry SDK, imported only when tracing is turned on (setup.ts): a process that does not
 * trace does not load it (about 5 MiB of its idle memory).
 */
export function registerTracerProvider(serviceName: string, exporter: SpanExporter | undefined) {
  const processor = exporter
    ? new SimpleSpanProcessor({ exporter })
    : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return provider;
}

export function unregisterTracerProvider(): void {
  trace.disable();
  context.disable();
  propagation.disable();
}
