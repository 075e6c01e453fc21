import type { Db, EmbedRow, EmbedTable } from "../schema.js";

/** Plain data access for embeds. */

export type EmbedInput = Omit<EmbedTable, "created_at">;

export function insertEmbed(db: Db, input: EmbedInput): Promise<EmbedRow> {
  return db.insertInto("embeds").values(input).returningAll().executeTakeFirstOrThrow();
}

export function findEmbed(db: Db, id: string): Promise<EmbedRow | undefined> {
  return db.selectFrom("embeds").selectAll().where("id", "=", id).executeTakeFirst();
}
