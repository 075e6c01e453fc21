import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { tracer, tracingOn } from "./setup.js";

/** Attribute naming the suite's service a span belongs to (one process may run them all). */
export const SERVICE_ATTRIBUTE = "avatar.service";

export type Carrier = Record<string, string>;

/** Writes the active context's `traceparent` (and `tracestate`) into a carrier of headers. */
export function injectContext(carrier: Carrier, ctx: Context = context.active()): Carrier {
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a carrier of headers continues (the root context when it carries none). */
export function extractContext(carrier: Carrier): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  /** The parent; the active context when absent. */
  parent?: Context;
}

/**
 * Runs `fn` inside a new span (ended when `fn` settles; a throw marks it failed). Without tracing, just
 * runs `fn`.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span?: Span) => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return fn();
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes ?? {} }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** inSpan for synchronous work (a core publish must throw synchronously, as the bus does). */
export function inSpanSync<T>(name: string, options: SpanOptions, fn: () => T): T {
  if (!tracingOn()) return fn();
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes ?? {} }, parent);
  try {
    return context.with(trace.setSpan(parent, span), fn);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The trace and span ids of the active span, for log lines (undefined when tracing is off). */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!tracingOn()) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export { SpanKind };
