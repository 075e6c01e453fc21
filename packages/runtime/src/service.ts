import type { Bus } from "@avatar/bus";
import type { Kysely } from "kysely";
import type { Clients, ServiceName } from "./clients.js";
import type { Env } from "./config.js";
import { createDb } from "./db.js";
import type { Logger } from "./log.js";
import { meterBus } from "./metrics/bus.js";
import { collectProcessMetrics } from "./metrics/registry.js";
import { type Migrations, migrateToLatest } from "./migrate.js";
import { type Listening, type ServiceApp, serviceHandler } from "./server.js";
import type { ServiceIdentity } from "./service-identity.js";
import { traceBus } from "./tracing/bus.js";

/** What a service gets from whoever runs it (its own process, or the one-process suite). */
export interface ServiceDeps<DB> {
  db: Kysely<DB>;
  bus: Bus;
  log: Logger;
  clients: Clients;
  /** The environment; a service reads its own settings from it with readConfig. */
  env: Env;
}

/** Everything needed to run one service: its name (also its Postgres schema), migrations and build(). */
export interface ServiceModule<DB = unknown> {
  readonly name: ServiceName;
  readonly migrations: Migrations;
  build(deps: ServiceDeps<DB>): ServiceApp | Promise<ServiceApp>;
}

/** A module of any database type, for lists of modules (each module's own DB type does not matter there). */
// biome-ignore lint/suspicious/noExplicitAny: the database type differs per module and is erased here
export type AnyServiceModule = ServiceModule<any>;

export interface RunningService {
  readonly name: ServiceName;
  readonly app: ServiceApp;
  /** Graceful: stop taking requests, finish in-flight ones, stop background work, close the pool. */
  stop(): Promise<void>;
}

export interface StartServiceOptions {
  databaseUrl: string;
  bus: Bus;
  log: Logger;
  clients: Clients;
  env: Env;
  listening: Listening & { setHandler(handler: import("node:http").RequestListener): void };
  /** The service's own identity: it verifies its callers with it (its clients sign with it too). */
  identity: ServiceIdentity;
  poolSize?: number;
}

/**
 * Migrates the service's schema, builds it, serves it on an already listening server, starts its work.
 * The service's bus is counted and traced under its name (metrics/, tracing/).
 */
export async function startService<DB>(
  module: ServiceModule<DB>,
  options: StartServiceOptions,
): Promise<RunningService> {
  collectProcessMetrics();
  const log = options.log.child({ service: module.name });
  const bus = observedBus(options.bus, module.name);
  const db = createDb<DB>({
    url: options.databaseUrl,
    schema: module.name,
    poolSize: options.poolSize ?? 10,
    onError: (err) => log.warn("idle database connection failed", { err }),
  });
  try {
    const applied = await migrateToLatest(db as Kysely<unknown>, module.name, module.migrations);
    if (applied.length > 0) log.info("migrated", { applied });
    const app = await module.build({ db, bus, log, clients: options.clients, env: options.env });
    const ready = app.ready;
    const withDbReadiness: ServiceApp = {
      ...app,
      ready: async () => {
        await db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
        return ready ? ready.call(app) : true;
      },
    };
    if (options.identity.name !== module.name) {
      throw new Error(`the ${module.name} service was given the identity of ${options.identity.name}`);
    }
    options.listening.setHandler(serviceHandler(withDbReadiness, log, options.identity));
    await app.start?.();
    return {
      name: module.name,
      app,
      stop: async () => {
        await options.listening.close();
        await app.stop?.();
        await db.destroy();
      },
    };
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** A process's bus as one of its services (or its gateway) uses it: counted, then traced, under its name. */
export function observedBus(bus: Bus, name: string): Bus {
  return traceBus(meterBus(bus, name), name);
}
