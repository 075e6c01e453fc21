import type { Kysely } from "kysely";

/** Transcript entries (idempotent per writer-chosen entry id) and stored session events. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("transcript_entries")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("session_id", "uuid", (c) => c.notNull().references("sessions.id"))
    .addColumn("entry_id", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("transcript", "text", (c) => c.notNull())
    .addColumn("absolute_timestamp", "bigint", (c) => c.notNull())
    .addColumn("relative_timestamp", "bigint", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("transcript_entries_once", ["session_id", "entry_id"])
    .execute();
  await db.schema
    .createIndex("transcript_entries_time_idx")
    .on("transcript_entries")
    .columns(["session_id", "absolute_timestamp", "id"])
    .execute();

  await db.schema
    .createTable("session_events")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("seq", "bigserial", (c) => c.notNull().unique())
    .addColumn("session_id", "uuid", (c) => c.notNull().references("sessions.id"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("session_events_session_idx")
    .on("session_events")
    .columns(["session_id", "seq"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("session_events").execute();
  await db.schema.dropTable("transcript_entries").execute();
}
