import type { Db, EmbedRow, EmbedTable } from "../schema.js";

/** Plain data access for embeds. */

export type EmbedInput = Omit<EmbedTable, "created_at" | "updated_at">;

export type EmbedChanges = Partial<
  Pick<EmbedTable, "max_concurrent_sessions" | "max_sessions_per_hour" | "allowed_origins" | "is_disabled">
>;

export function insertEmbed(db: Db, input: EmbedInput): Promise<EmbedRow> {
  return db.insertInto("embeds").values(input).returningAll().executeTakeFirstOrThrow();
}

export function findEmbed(db: Db, id: string): Promise<EmbedRow | undefined> {
  return db.selectFrom("embeds").selectAll().where("id", "=", id).executeTakeFirst();
}

export function updateEmbed(
  db: Db,
  spaceId: string,
  id: string,
  changes: EmbedChanges,
): Promise<EmbedRow | undefined> {
  return db
    .updateTable("embeds")
    .set({ ...changes, updated_at: new Date() })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .returningAll()
    .executeTakeFirst();
}
