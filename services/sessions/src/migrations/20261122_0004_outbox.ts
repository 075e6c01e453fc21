import type { Kysely } from "kysely";

/**
 * Bus events written in the same transaction as the change they announce, published afterwards; a crash
 * between commit and publish delays an event, it never loses one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("outbox")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("payload", "bytea", (c) => c.notNull())
    .addColumn("msg_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("outbox").execute();
}
