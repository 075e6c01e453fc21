import type pg from "pg";
import { dbPoolConnections } from "./catalog.js";
import { sampleInto } from "./sampled.js";

/** Reports a service's Postgres pool (total, idle, waiting) until the pool is ended. */
export function meterPool(service: string, pool: pg.Pool): void {
  const stop = sampleInto(dbPoolConnections, () => {
    if (pool.ended) {
      stop();
      return [];
    }
    return [
      { labels: { service, state: "total" }, value: pool.totalCount },
      { labels: { service, state: "idle" }, value: pool.idleCount },
      { labels: { service, state: "waiting" }, value: pool.waitingCount },
    ];
  });
}
