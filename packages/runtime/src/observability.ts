import type { Env } from "./config.js";
import type { Logger } from "./log.js";
import { collectProcessMetrics } from "./metrics/registry.js";
import { serveMetrics } from "./metrics/serve.js";
import { startTracing } from "./tracing/setup.js";

export interface ProcessObservability {
  /** `http://host:port/metrics` when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Stops the metrics listener and flushes the traces. */
  stop(): Promise<void>;
}

/**
 * What every process starts besides its work: Node's process metrics, the metrics listener on
 * METRICS_PORT (when set), and tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set).
 */
export async function startObservability(options: {
  name: string;
  metricsPort: number | undefined;
  host: string;
  log: Logger;
  env?: Env;
}): Promise<ProcessObservability> {
  collectProcessMetrics();
  const tracing = await startTracing({ serviceName: options.name, env: options.env ?? process.env });
  const metrics =
    options.metricsPort === undefined
      ? undefined
      : await serveMetrics({ port: options.metricsPort, host: options.host });
  const metricsUrl = metrics ? `${metrics.url}/metrics` : undefined;
  if (metricsUrl) options.log.info("metrics listening", { url: metricsUrl });
  return {
    metricsUrl,
    stop: async () => {
      await metrics?.close(1_000);
      await tracing.shutdown();
    },
  };
}
