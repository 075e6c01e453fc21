import { type Kysely, type Migration, Migrator, sql } from "kysely";
import { assertIdentifier } from "./db.js";

export type Migrations = Record<string, Migration>;

/**
 * Brings a service's schema to its latest migration. A session-level advisory lock per schema makes
 * replicas that start together take turns: the first migrates, the others find nothing left to do.
 */
export async function migrateToLatest(
  db: Kysely<unknown>,
  schema: string,
  migrations: Migrations,
): Promise<string[]> {
  assertIdentifier(schema);
  const lockKey = `avatar.migrate.${schema}`;
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(hashtext(${lockKey}))`.execute(conn);
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(conn);
      const migrator = new Migrator({
        db: conn,
        migrationTableSchema: schema,
        provider: { getMigrations: async () => migrations },
      });
      const { error, results } = await migrator.migrateToLatest();
      if (error) {
        const failed = results?.find((r) => r.status === "Error")?.migrationName;
        throw new Error(`migration ${failed ?? "?"} of schema ${schema} failed: ${String(error)}`, {
          cause: error,
        });
      }
      return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${lockKey}))`.execute(conn);
    }
  });
}
