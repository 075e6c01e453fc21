import type { ServiceUrls } from "./clients.js";
import { type ConfigOf, type Env, env, readConfig } from "./config.js";
import { DEFAULT_PIPELINE_CONNECTIONS } from "./db.js";

/** Settings every process of the suite understands (each service adds its own). */
export const processSettings = {
  PORT: env.int({ default: 8080, min: 0, max: 65535 }),
  HOST: env.string({ default: "127.0.0.1" }),
  DATABASE_URL: env.optionalUrl({ protocols: ["postgres:", "postgresql:"] }),
  /** Connections of a service process's pool (the deployment's connection budget counts them). */
  DATABASE_POOL_SIZE: env.int({ default: 10, min: 1, max: 100 }),
  /** Of those, the shared pipelined connections for standalone statements (at most half; db.ts). */
  DATABASE_PIPELINE_CONNECTIONS: env.int({ default: DEFAULT_PIPELINE_CONNECTIONS, min: 0, max: 50 }),
  NATS_URL: env.optionalString(),
  NATS_NAMESPACE: env.optionalString(),
  LOG_LEVEL: env.oneOf(["debug", "info", "warn", "error"] as const, { default: "info" }),
  DATA_DIR: env.string({ default: ".data" }),
  /**
   * A port of its own for `GET /metrics` (Prometheus). The gateway and `pnpm start` default to 9464;
   * a service also answers /metrics on its own (internal) port.
   */
  METRICS_PORT: env.optionalInt({ min: 0, max: 65535 }),
  TOKENS_URL: env.optionalUrl(),
  SESSIONS_URL: env.optionalUrl(),
  CATALOG_URL: env.optionalUrl(),
  AGENTS_URL: env.optionalUrl(),
  MEMORY_URL: env.optionalUrl(),
  PIPELINE_URL: env.optionalUrl(),
  WEBHOOKS_URL: env.optionalUrl(),
};

export type ProcessConfig = ConfigOf<typeof processSettings>;

export function readProcessConfig(source: Env = process.env): ProcessConfig {
  return readConfig(processSettings, source);
}

export function serviceUrlsFrom(config: ProcessConfig): ServiceUrls {
  return {
    tokens: config.TOKENS_URL,
    sessions: config.SESSIONS_URL,
    catalog: config.CATALOG_URL,
    agents: config.AGENTS_URL,
    memory: config.MEMORY_URL,
    pipeline: config.PIPELINE_URL,
    webhooks: config.WEBHOOKS_URL,
  };
}
