import type pg from "pg";
import type { Gauge } from "prom-client";
import { dbPipeline, dbPoolConnections } from "./catalog.js";
import { type Reading, sampleInto } from "./sampled.js";

/** Reports a service's Postgres pool (total, idle, waiting) until the pool is ended. */
export function meterPool(service: string, pool: pg.Pool): void {
  sampleUntilEnded(dbPoolConnections, pool, () => [
    { labels: { service, state: "total" }, value: pool.totalCount },
    { labels: { service, state: "idle" }, value: pool.idleCount },
    { labels: { service, state: "waiting" }, value: pool.waitingCount },
  ]);
}

/** Reports a service's pipelined connections (pipelined-pool.ts) until they are closed. */
export function meterPipeline(
  service: string,
  pipeline: { ended: boolean; stats(): { connections: number; statements: number } },
): void {
  sampleUntilEnded(dbPipeline, pipeline, () => {
    const { connections, statements } = pipeline.stats();
    return [
      { labels: { service, state: "connections" }, value: connections },
      { labels: { service, state: "statements" }, value: statements },
    ];
  });
}

function sampleUntilEnded(gauge: Gauge, source: { ended: boolean }, read: () => Reading[]): void {
  const stop = sampleInto(gauge, () => {
    if (!source.ended) return read();
    stop();
    return [];
  });
}
