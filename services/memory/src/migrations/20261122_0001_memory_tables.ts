import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("memories")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("memory_type", "text", (c) => c.notNull().check(sql`memory_type in ('session')`))
    .addColumn("memory_content", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("source_session_id", "uuid")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("memories_space_idx").on("memories").columns(["space_id", "seq"]).execute();
  await db.schema
    .createIndex("memories_source_session_idx")
    .on("memories")
    .columns(["space_id", "source_session_id"])
    .where(sql.ref("source_session_id"), "is not", null)
    .execute();

  await db.schema
    .createTable("session_episodes")
    .addColumn("memory_id", "uuid", (c) => c.notNull().references("memories.id").onDelete("cascade"))
    .addColumn("session_id", "uuid", (c) => c.notNull())
    .addColumn("sequence_num", "integer", (c) => c.notNull().check(sql`sequence_num >= 1`))
    .addColumn("summary", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("session_episodes_pk", ["memory_id", "session_id"])
    .addUniqueConstraint("session_episodes_sequence_uq", ["memory_id", "sequence_num"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("session_episodes").execute();
  await db.schema.dropTable("memories").execute();
}
