import { connectBus } from "./bus.js";
import { createClients } from "./clients.js";
import { ConfigError } from "./config.js";
import { identityFromEnv } from "./identity-keys.js";
import { createLogger, type Logger } from "./log.js";
import { startObservability } from "./observability.js";
import { readProcessConfig, serviceUrlsFrom } from "./process-config.js";
import { listen } from "./server.js";
import { keepsData, type ServiceModule, type StatelessServiceModule, startService } from "./service.js";
import type { ServiceIdentity } from "./service-identity.js";
import { onShutdownSignal } from "./shutdown.js";

/**
 * The entry point of a service running as its own process: DATABASE_URL is required when the service
 * keeps data (a stateless one ignores it), NATS_URL carries its events to the other processes, the other
 * services are reached at their *_URL.
 */
export async function runServiceProcess<DB>(
  module: ServiceModule<DB> | StatelessServiceModule,
): Promise<void> {
  let config: ReturnType<typeof readProcessConfig>;
  let databaseUrl: string | undefined;
  let log: Logger;
  let identity: ServiceIdentity;
  try {
    config = readProcessConfig();
    databaseUrl = config.DATABASE_URL;
    if (keepsData(module) && !databaseUrl) {
      throw new ConfigError(["DATABASE_URL is required when a service that keeps data runs on its own"]);
    }
    log = createLogger({ level: config.LOG_LEVEL, fields: { process: module.name } });
    identity = identityFromEnv(module.name, process.env, log, { verifiesCallers: true });
  } catch (err) {
    process.stderr.write(`${module.name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const { bus, running, observability } = await startOrExit(log, async () => {
    const observability = await startObservability({
      name: module.name,
      metricsPort: config.METRICS_PORT,
      host: config.HOST,
      log,
    });
    const bus = await connectBus(
      { natsUrl: config.NATS_URL, namespace: config.NATS_NAMESPACE },
      module.name,
      log,
    );
    if (!config.NATS_URL) log.warn("NATS_URL not set: events stay inside this process");
    const listening = await listen({ port: config.PORT, host: config.HOST });
    const running = await startService(module, {
      ...(databaseUrl ? { databaseUrl } : {}),
      bus,
      log,
      clients: createClients(serviceUrlsFrom(config), identity),
      env: process.env,
      listening,
      identity,
      poolSize: config.DATABASE_POOL_SIZE,
      pipelineConnections: config.DATABASE_PIPELINE_CONNECTIONS,
    });
    log.info("listening", { url: listening.url });
    return { bus, running, observability };
  });
  onShutdownSignal(log, async () => {
    await running.stop();
    await bus.close();
    await observability.stop();
  });
}

/**
 * Runs a process's start-up; when it fails (Postgres or NATS unreachable, port taken) the process says so
 * in one error log line and exits 1, instead of dying on an unhandled rejection with a stack dump.
 */
export async function startOrExit<T>(log: Logger, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    log.error("could not start", { err });
    process.exit(1);
  }
}
