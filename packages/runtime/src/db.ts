import { Kysely, PostgresDialect, type PostgresPool } from "kysely";
import pg from "pg";
import { meterPipeline, meterPool } from "./metrics/db-pool.js";
import { pipelinedPool } from "./pipelined-pool.js";
import { preparingPool, StatementNames } from "./prepared-statements.js";

/**
 * Each service owns one Postgres schema: its pool sets `search_path` to that schema, so its queries
 * name tables without a prefix and never see another service's tables by accident.
 */

export interface DbOptions {
  url: string;
  schema: string;
  /** Every connection the process opens to its schema, the pipelined ones included. */
  poolSize?: number;
  /**
   * How many of those are shared pipelined connections for standalone statements (`standalone(db)`,
   * pipelined-pool.ts), at most half of them; the rest are the pool's. Default 0.
   */
  pipelineConnections?: number;
  onError?: (err: Error) => void;
}

/** Pipelined connections a service process keeps by default (DATABASE_PIPELINE_CONNECTIONS). */
export const DEFAULT_PIPELINE_CONNECTIONS = 2;

const identifier = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertIdentifier(name: string): string {
  if (!identifier.test(name)) throw new Error(`not a safe Postgres identifier: ${JSON.stringify(name)}`);
  return name;
}

export function createDb<DB>(options: DbOptions): Kysely<DB> {
  const schema = assertIdentifier(options.schema);
  const size = options.poolSize ?? 10;
  const lines = Math.min(options.pipelineConnections ?? 0, Math.floor(size / 2));
  // Every connection of the process, pooled or pipelined, opens on the service's schema.
  const connection = {
    connectionString: options.url,
    options: `-c search_path=${schema}`,
    connectionTimeoutMillis: 10_000,
  };
  const pool = new pg.Pool({ ...connection, max: size - lines });
  // A client losing its connection must not crash the process: an idle one is replaced by the pool, and
  // one checked out between two queries (a transaction waiting on other work) fails its next query.
  pool.on("error", (err) => options.onError?.(err));
  meterPool(schema, pool);
  pool.on("connect", (client) => {
    client.on("error", (err) => options.onError?.(err));
  });
  const names = new StatementNames();
  if (lines === 0) return kysely<DB>(preparingPool(pool, names));
  const pipelined = pipelinedPool({ connection, connections: lines, onError: options.onError }, names);
  meterPipeline(schema, pipelined);
  const db = new KyselyWithPipeline<DB>(preparingPool(pool, names), pipelined.end);
  standaloneDbs.set(db, kysely<DB>(pipelined));
  return db;
}

/** A database whose destroy closes its pipelined connections too (Kysely ends a pool only once used). */
class KyselyWithPipeline<DB> extends Kysely<DB> {
  constructor(
    pool: DialectPool,
    private readonly endPipeline: () => Promise<void>,
  ) {
    super({ dialect: dialect(pool) });
  }

  override async destroy(): Promise<void> {
    await Promise.all([super.destroy(), this.endPipeline()]);
  }
}

type DialectPool = { connect(): Promise<unknown>; end(): Promise<void> };

const dialect = (pool: DialectPool) => new PostgresDialect({ pool: pool as unknown as PostgresPool });

function kysely<DB>(pool: DialectPool): Kysely<DB> {
  return new Kysely<DB>({ dialect: dialect(pool) });
}

/** Each database's twin that sends its statements on the pipelined connections. */
const standaloneDbs = new WeakMap<object, object>();

/**
 * Where a statement that stands alone goes: `db`'s pipelined connections when it has some, else `db`
 * itself. Only for one query or data change outside a transaction, and never awaited by a transaction
 * that holds locks (pipelined-pool.ts).
 */
export function standalone<DB>(db: Kysely<DB>): Kysely<DB> {
  return (standaloneDbs.get(db) as Kysely<DB> | undefined) ?? db;
}
