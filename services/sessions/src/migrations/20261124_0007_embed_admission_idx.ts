import { type Kysely, sql } from "kysely";

/** An embed's recent and running sessions, counted when a visitor's session is admitted. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex("sessions_embed_recent_idx")
    .on("sessions")
    .columns(["embed_id", "created_at"])
    .where(sql<boolean>`embed_id is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("sessions_embed_recent_idx").execute();
}
