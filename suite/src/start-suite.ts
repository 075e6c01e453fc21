import path from "node:path";
import type { Bus } from "@avatar/bus";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@avatar/embedded-postgres";
import { type CounterStore, type GatewayConfig, readGatewayConfig, startGateway } from "@avatar/gateway";
import {
  type Clients,
  connectBus,
  createClients,
  type Env,
  type IdentitySet,
  InProcessServices,
  identityOf,
  type Logger,
  listen,
  localIdentitySet,
  type RunningService,
  removeDiscovery,
  type ServiceName,
  type ServiceUrls,
  serveMetrics,
  startService,
  writeDiscovery,
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
  /** Clients signed as the operator (avatarctl): what the demo seeding and tools call with. */
  clients: Clients;
  /** Every identity of the suite (DATA_DIR/keys/service-identity.env). */
  identities: IdentitySet;
  bus: Bus;
  databaseUrl: string;
  /** `http://127.0.0.1:<port>/metrics` when `metricsPort` was given. */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

/**
 * Settings of the services that differ in one process (the environment still wins). One insert of new
 * sessions out at a time: the sessions service shares this event loop with the gateway and the tokens
 * service, and that served 13 % more mints (README, Performance); as separate processes it did no
 * better, and read lower in some runs, so they keep a statement per turn.
 */
export const SUITE_DEFAULTS = { SESSIONS_CREATION_INSERTS_IN_FLIGHT: "1" } as const;

/**
 * Every service and the gateway in one process: services serve Connect on loopback ports, and call each
 * other in process (InProcessServices: the same handlers, without the loopback HTTP hop), each as
 * itself: the RPCs' allow-lists hold as in a deployment. Callers outside the process (avatarctl, tests)
 * reach the loopback ports with their own signed service identity, verified there. Only the gateway
 * faces the outside. DATA_DIR/suite.json tells `avatarctl` where the services are while the suite runs.
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

    const identities = localIdentitySet(options.dataDir, log);
    const listenings = await Promise.all(serviceModules.map(() => listen({ port: 0, host: "127.0.0.1" })));
    const serviceUrls = Object.fromEntries(
      serviceModules.map((m, i) => [m.name, listenings[i]?.url]),
    ) as Record<ServiceName, string>;
    // The services call each other (and the gateway calls them) in this process, as functions; they
    // still serve Connect on their loopback ports for callers outside it.
    const inProcess = new InProcessServices(log);
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
        clients: inProcess.clients(module.name),
        identity: identityOf(identities, module.name),
        env: { DATA_DIR: options.dataDir, ...SUITE_DEFAULTS, ...env },
        listening,
        poolSize: 5,
      });
      running.push(service);
      inProcess.register(service.app);
    }

    const gateway = await startGateway({
      clients: inProcess.clients("gateway"),
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

    writeDiscovery(options.dataDir, {
      pid: process.pid,
      gateway: gateway.url,
      services: serviceUrls,
      operatorKey: identities.privateKeys.avatarctl,
    });
    cleanups.push(async () => removeDiscovery(options.dataDir));

    // What the demo seeding and tests call with: the operator's identity, over the loopback ports.
    const clients = createClients(serviceUrls as ServiceUrls, identityOf(identities, "avatarctl"));
    return { gatewayUrl: gateway.url, serviceUrls, clients, identities, bus, databaseUrl, metricsUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
