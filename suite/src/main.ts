import { readGatewayConfig } from "@avatar/gateway";
import {
  ConfigError,
  createLogger,
  onShutdownSignal,
  readProcessConfig,
  startOrExit,
  startTracing,
} from "@avatar/runtime";
import { seedDemoSpace } from "./demo.js";
import { startSuite } from "./start-suite.js";

/**
 * `pnpm start`: the whole suite in one process on embedded defaults (embedded Postgres under DATA_DIR,
 * in-process bus), or on DATABASE_URL and NATS_URL when they are set. The gateway listens on PORT, the
 * metrics on METRICS_PORT (9464); traces go out when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
let config: ReturnType<typeof readProcessConfig>;
let gatewayConfig: ReturnType<typeof readGatewayConfig>;
try {
  config = readProcessConfig({ HOST: "0.0.0.0", METRICS_PORT: "9464", ...process.env });
  gatewayConfig = readGatewayConfig();
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
  process.exit(2);
}

const log = createLogger({ level: config.LOG_LEVEL, fields: { process: "suite" } });
const tracing = await startTracing({ serviceName: "suite" });
// startSuite stops what it had started before it rejects, so exiting leaves nothing behind.
const suite = await startOrExit(log, () =>
  startSuite({
    log,
    dataDir: config.DATA_DIR,
    gatewayPort: config.PORT,
    gatewayHost: config.HOST,
    gatewayConfig,
    metricsPort: config.METRICS_PORT,
    ...(config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : {}),
    ...(config.NATS_URL ? { natsUrl: config.NATS_URL, natsNamespace: config.NATS_NAMESPACE } : {}),
  }),
);
onShutdownSignal(log, async () => {
  await suite.stop();
  await tracing.shutdown();
});

const demo = await seedDemoSpace(suite.clients, process.env.AVATAR_DEMO_API_KEY || undefined);
const lines = [
  "",
  `  Avatar session service is up: ${suite.gatewayUrl}`,
  `  Demo space: ${demo.spaceId}`,
  demo.newApiKey
    ? `  Demo API key (shown once, keep it): ${demo.newApiKey}`
    : "  Demo API key: AVATAR_DEMO_API_KEY, or the key printed at the first start",
  `  Try: curl -H "X-API-KEY: <key>" ${suite.gatewayUrl}/v1/avatars`,
  ...(suite.metricsUrl ? [`  Metrics: ${suite.metricsUrl}`] : []),
  "",
];
process.stdout.write(`${lines.join("\n")}\n`);
