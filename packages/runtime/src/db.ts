import { Kysely, PostgresDialect, type PostgresPool } from "kysely";
import pg from "pg";
import { meterPool } from "./metrics/db-pool.js";
import { preparingPool } from "./prepared-statements.js";

/**
 * Each service owns one Postgres schema: its pool sets `search_path` to that schema, so its queries
 * name tables without a prefix and never see another service's tables by accident.
 */

export interface DbOptions {
  url: string;
  schema: string;
  poolSize?: number;
  onError?: (err: Error) => void;
}

const identifier = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertIdentifier(name: string): string {
  if (!identifier.test(name)) throw new Error(`not a safe Postgres identifier: ${JSON.stringify(name)}`);
  return name;
}

export function createDb<DB>(options: DbOptions): Kysely<DB> {
  const schema = assertIdentifier(options.schema);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    options: `-c search_path=${schema}`,
    connectionTimeoutMillis: 10_000,
  });
  // A client losing its connection must not crash the process: an idle one is replaced by the pool, and
  // one checked out between two queries (a transaction waiting on other work) fails its next query.
  pool.on("error", (err) => options.onError?.(err));
  meterPool(schema, pool);
  pool.on("connect", (client) => {
    client.on("error", (err) => options.onError?.(err));
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool) as PostgresPool }) });
}
