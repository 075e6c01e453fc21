import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The process's one Prometheus registry. Every metric of every service the process runs is registered
 * here (the one-process suite runs them all: series carry a `service` label where that matters), plus
 * Node's own (`process_*`, `nodejs_*`).
 */
export const metricsRegistry = new Registry();

let defaults = false;

/** Node's process metrics (CPU, memory, event loop lag, GC), registered once per process. */
export function collectProcessMetrics(): void {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The exposition text of every metric, as `GET /metrics` serves it. */
export function metricsText(): Promise<string> {
  return metricsRegistry.metrics();
}

export const METRICS_CONTENT_TYPE = metricsRegistry.contentType;
