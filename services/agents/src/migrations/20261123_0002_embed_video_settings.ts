import { type Kysely, sql } from "kysely";

/** An embed's video: the quality and encoding its sessions stream (the orientation was there already). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("embeds")
    .addColumn("video_quality", "text", (c) =>
      c.notNull().defaultTo("high").check(sql`video_quality in ('very_high', 'high', 'medium', 'low')`),
    )
    .addColumn("video_encoding", "text", (c) =>
      c.notNull().defaultTo("H264").check(sql`video_encoding in ('H264', 'VP8')`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("embeds").dropColumn("video_quality").dropColumn("video_encoding").execute();
}
