import type { Bus } from "@avatar/bus";
import type { Kysely } from "kysely";
import type { Clients, ServiceName } from "./clients.js";
import type { Env } from "./config.js";
import { createDb, DEFAULT_PIPELINE_CONNECTIONS } from "./db.js";
import type { Logger } from "./log.js";
import { meterBus } from "./metrics/bus.js";
import { collectProcessMetrics } from "./metrics/registry.js";
import { type Migrations, migrateToLatest } from "./migrate.js";
import { type Listening, type ServiceApp, serviceHandler } from "./server.js";
import type { ServiceIdentity } from "./service-identity.js";
import { traceBus } from "./tracing/bus.js";

/** What every service gets from whoever runs it (its own process, or the one-process suite). */
export interface ServiceBasics {
  bus: Bus;
  log: Logger;
  clients: Clients;
  /** The environment; a service reads its own settings from it with readConfig. */
  env: Env;
}

/** What a service that keeps data gets: the basics and its database (its own schema). */
export interface ServiceDeps<DB> extends ServiceBasics {
  db: Kysely<DB>;
}

/** A service that keeps data: its name (also its Postgres schema), migrations and build(). */
export interface ServiceModule<DB = unknown> {
  readonly name: ServiceName;
  readonly migrations: Migrations;
  /**
   * It sends standalone statements on pipelined connections (`standalone(db)`, db.ts): that many of its
   * pool's connections (DATABASE_PIPELINE_CONNECTIONS) are those. Without it the whole pool is the pool.
   */
  readonly pipelinesStatements?: boolean;
  build(deps: ServiceDeps<DB>): ServiceApp | Promise<ServiceApp>;
}

/**
 * A service that keeps no data: it gets no database (no schema, no pool, no connections counted against
 * Postgres's), and its readiness does not wait for Postgres.
 */
export interface StatelessServiceModule {
  readonly name: ServiceName;
  build(deps: ServiceBasics): ServiceApp | Promise<ServiceApp>;
}

/** A module of any database type, for lists of modules (each module's own DB type does not matter there). */
// biome-ignore lint/suspicious/noExplicitAny: the database type differs per module and is erased here
export type AnyServiceModule = ServiceModule<any> | StatelessServiceModule;

/** Whether a module keeps data (has migrations), and so needs a database. */
export function keepsData<DB>(
  module: ServiceModule<DB> | StatelessServiceModule,
): module is ServiceModule<DB> {
  return "migrations" in module;
}

export interface RunningService {
  readonly name: ServiceName;
  readonly app: ServiceApp;
  /** Graceful: stop taking requests, finish in-flight ones, stop background work, close the pool. */
  stop(): Promise<void>;
}

export interface StartServiceOptions {
  /** Required for a service that keeps data; a stateless one connects to no database. */
  databaseUrl?: string;
  bus: Bus;
  log: Logger;
  clients: Clients;
  env: Env;
  listening: Listening & { setHandler(handler: import("node:http").RequestListener): void };
  /** The service's own identity: it verifies its callers with it (its clients sign with it too). */
  identity: ServiceIdentity;
  poolSize?: number;
  /** Of the pool's connections, the pipelined ones of a module that pipelines (DEFAULT_PIPELINE_CONNECTIONS). */
  pipelineConnections?: number;
}

/**
 * Migrates the service's schema (a service that keeps data), builds it, serves it on an already
 * listening server, starts its work. The service's bus is counted and traced under its name (metrics/,
 * tracing/).
 */
export async function startService<DB>(
  module: ServiceModule<DB> | StatelessServiceModule,
  options: StartServiceOptions,
): Promise<RunningService> {
  collectProcessMetrics();
  const log = options.log.child({ service: module.name });
  if (options.identity.name !== module.name) {
    throw new Error(`the ${module.name} service was given the identity of ${options.identity.name}`);
  }
  const basics: ServiceBasics = {
    bus: observedBus(options.bus, module.name),
    log,
    clients: options.clients,
    env: options.env,
  };
  if (!keepsData(module)) return serve(module.name, await module.build(basics), options, log);
  if (!options.databaseUrl)
    throw new Error(`the ${module.name} service keeps data and was given no database`);
  const db = createDb<DB>({
    url: options.databaseUrl,
    schema: module.name,
    poolSize: options.poolSize ?? 10,
    pipelineConnections: module.pipelinesStatements
      ? (options.pipelineConnections ?? DEFAULT_PIPELINE_CONNECTIONS)
      : 0,
    onError: (err) => log.warn("idle database connection failed", { err }),
  });
  try {
    const applied = await migrateToLatest(db as Kysely<unknown>, module.name, module.migrations);
    if (applied.length > 0) log.info("migrated", { applied });
    const app = await module.build({ ...basics, db });
    const ready = app.ready;
    const withDbReadiness: ServiceApp = {
      ...app,
      ready: async () => {
        await db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
        return ready ? ready.call(app) : true;
      },
    };
    const running = await serve(module.name, withDbReadiness, options, log);
    return {
      name: module.name,
      app,
      stop: async () => {
        await running.stop();
        await db.destroy();
      },
    };
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** Serves a built service on its listening server and starts its work. */
async function serve(
  name: ServiceName,
  app: ServiceApp,
  options: StartServiceOptions,
  log: Logger,
): Promise<RunningService> {
  options.listening.setHandler(serviceHandler(app, log, options.identity));
  await app.start?.();
  return {
    name,
    app,
    stop: async () => {
      await options.listening.close();
      await app.stop?.();
    },
  };
}

/** A process's bus as one of its services (or its gateway) uses it: counted, then traced, under its name. */
export function observedBus(bus: Bus, name: string): Bus {
  return traceBus(meterBus(bus, name), name);
}
