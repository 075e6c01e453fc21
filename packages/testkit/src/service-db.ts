import { createDb, type Migrations, migrateToLatest } from "@avatar/runtime";
import type { Kysely } from "kysely";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

/**
 * A fresh database of this test file with one service's schema migrated, as the service opens it
 * (`pipelineConnections` of `poolSize` pipelined, for a module that pipelines its standalone statements).
 */
export interface ServiceTestDb<DB> {
  url: string;
  database: TestDatabase;
  db: Kysely<DB>;
  /** Another pool on the same database and schema, as a second replica has (closed with the rest). */
  openPool(): Kysely<DB>;
  close(): Promise<void>;
}

export async function openServiceDb<DB>(
  schema: string,
  migrations: Migrations,
  poolSize = 4,
  pipelineConnections = 0,
): Promise<ServiceTestDb<DB>> {
  const database = await createTestDatabase();
  const pools: Kysely<DB>[] = [];
  const openPool = () => {
    const pool = createDb<DB>({
      url: database.url,
      schema,
      poolSize,
      pipelineConnections,
    });
    pools.push(pool);
    return pool;
  };
  const db = openPool();
  await migrateToLatest(db as Kysely<unknown>, schema, migrations);
  return {
    url: database.url,
    database,
    db,
    openPool,
    close: async () => {
      await Promise.all(pools.map((p) => p.destroy()));
      await database.drop();
    },
  };
}
