import {
  ConfigError,
  connectBus,
  createClients,
  createLogger,
  identityFromEnv,
  onShutdownSignal,
  readProcessConfig,
  serviceUrlsFrom,
  startObservability,
  startOrExit,
} from "@avatar/runtime";
import { readGatewayConfig } from "./config.js";
import { startGateway } from "./server.js";

/** The gateway as its own process: services at their *_URL, NATS_URL for the shared rate limits and events. */
let config: ReturnType<typeof readProcessConfig>;
let gatewayConfig: ReturnType<typeof readGatewayConfig>;
try {
  config = readProcessConfig({ HOST: "0.0.0.0", METRICS_PORT: "9464", ...process.env });
  gatewayConfig = readGatewayConfig();
  if (!config.TOKENS_URL)
    throw new ConfigError(["TOKENS_URL is required: the gateway authenticates through the tokens service"]);
} catch (err) {
  process.stderr.write(`gateway: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const log = createLogger({ level: config.LOG_LEVEL, fields: { process: "gateway" } });
let identity: ReturnType<typeof identityFromEnv>;
try {
  identity = identityFromEnv("gateway", process.env, log, { verifiesCallers: false });
} catch (err) {
  process.stderr.write(`gateway: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const { bus, running, observability } = await startOrExit(log, async () => {
  // Metrics on their own port (METRICS_PORT): the public port never serves them.
  const observability = await startObservability({
    name: "gateway",
    metricsPort: config.METRICS_PORT,
    host: config.HOST,
    log,
  });
  const bus = await connectBus(
    { natsUrl: config.NATS_URL, namespace: config.NATS_NAMESPACE },
    "gateway",
    log,
  );
  if (!config.NATS_URL) log.warn("NATS_URL not set: rate limits count per process");
  const running = await startGateway({
    clients: createClients(serviceUrlsFrom(config), identity),
    bus,
    log,
    config: gatewayConfig,
    port: config.PORT,
    host: config.HOST,
  });
  log.info("gateway listening", { url: running.url });
  return { bus, running, observability };
});
onShutdownSignal(log, async () => {
  await running.close();
  await bus.close();
  await observability.stop();
});
