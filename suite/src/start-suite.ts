import path from "node:path";
import type { Bus } from "@avatar/bus";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@avatar/embedded-postgres";
import { type CounterStore, type GatewayConfig, readGatewayConfig, startGateway } from "@avatar/gateway";
import {
  type Clients,
  connectBus,
  type Env,
  InProcessServices,
  type Logger,
  listen,
  type RunningService,
  type ServiceName,
  type ServiceUrls,
  serveMetrics,
  startService,
} from "@avatar/runtime";

import { serviceModules } from "./modules.js";

export interface SuiteOptions {
  log: Logger;
  /** Postgres server; an embedded one under `dataDir` when absent. */
  databaseUrl?: string;
  /** NATS server; an in-process bus when absent. */
  natsUrl?: string;
  /** Keeps this suite's subjects, consumers and buckets apart from others on the same NATS. */
  natsNamespace?: string;
  dataDir: string;
  gatewayPort: number;
  gatewayHost: string;
  /** Settings the services read (timeouts, keys); defaults to process.env. */
  env?: Env;
  gatewayConfig?: GatewayConfig;
  rateLimitStore?: CounterStore;
  /** Serves `GET /metrics` (every service's metrics: one process, one registry) on this port (0: any free one). */
  metricsPort?: number;
}

export interface Suite {
  gatewayUrl: string;
  serviceUrls: Record<ServiceName, string>;
  clients: Clients;
  bus: Bus;
  databaseUrl: string;
  /** `http://127.0.0.1:<port>/metrics` when `metricsPort` was given. */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

/**
 * Every service and the gateway in one process: services serve Connect on loopback ports, and call each
 * other in process (InProcessServices: the same handlers, without the loopback HTTP hop); only the
 * gateway faces the outside.
 */
export async function startSuite(options: SuiteOptions): Promise<Suite> {
  const env = options.env ?? process.env;
  const log = options.log;
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((err: unknown) => log.warn("stop step failed", { err }));
    }
  };
  try {
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const pg: EmbeddedPostgresHandle = await startEmbeddedPostgres({
        dataDir: path.join(options.dataDir, "pg"),
        onLog: (line) => log.debug("postgres", { line: line.trim() }),
      });
      cleanups.push(() => pg.stop());
      databaseUrl = pg.url;
      log.info("embedded postgres started", { port: pg.port });
    }
    const bus = await connectBus(
      { natsUrl: options.natsUrl, namespace: options.natsNamespace },
      "suite",
      log,
    );
    cleanups.push(() => bus.close());

    const listenings = await Promise.all(serviceModules.map(() => listen({ port: 0, host: "127.0.0.1" })));
    const serviceUrls = Object.fromEntries(
      serviceModules.map((m, i) => [m.name, listenings[i]?.url]),
    ) as Record<ServiceName, string>;
    // The services call each other (and the gateway calls them) in this process, as functions; they
    // still serve Connect on their loopback ports for callers outside it (avatarctl, tests).
    const inProcess = new InProcessServices(log);
    const clients = inProcess.clients();
    const running: RunningService[] = [];
    cleanups.push(async () => {
      for (const s of running.reverse()) await s.stop();
    });
    for (const [i, module] of serviceModules.entries()) {
      const listening = listenings[i];
      if (!listening) throw new Error("listener missing");
      const service = await startService(module, {
        databaseUrl,
        bus,
        log,
        clients,
        env: { DATA_DIR: options.dataDir, ...env },
        listening,
        poolSize: 5,
      });
      running.push(service);
      inProcess.register(service.app);
    }

    const gateway = await startGateway({
      clients,
      bus,
      log: log.child({ service: "gateway" }),
      config: options.gatewayConfig ?? readGatewayConfig(env),
      port: options.gatewayPort,
      host: options.gatewayHost,
      ...(options.rateLimitStore ? { rateLimitStore: options.rateLimitStore } : {}),
    });
    cleanups.push(() => gateway.close());

    let metricsUrl: string | undefined;
    if (options.metricsPort !== undefined) {
      const metrics = await serveMetrics({ port: options.metricsPort, host: options.gatewayHost });
      cleanups.push(() => metrics.close(1_000));
      metricsUrl = `${metrics.url}/metrics`;
    }

    return { gatewayUrl: gateway.url, serviceUrls, clients, bus, databaseUrl, metricsUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
