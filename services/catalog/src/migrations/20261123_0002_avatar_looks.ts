import { type Kysely, sql } from "kysely";

/** Each avatar's look: uploaded bytes, or a seed it is generated from (then cached in `look`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("avatar_looks")
    .addColumn("avatar_id", "uuid", (c) => c.primaryKey().references("avatars.id").onDelete("cascade"))
    // LookSeed fields (JSON) when the look is generated; null for an uploaded look.
    .addColumn("seed", "jsonb")
    // AvatarLook, binary protobuf: uploaded, or generated from the seed on first read.
    .addColumn("look", "bytea")
    .addColumn("look_key", "text", (c) => c.notNull().defaultTo(""))
    // Why an uploaded look cannot be rendered (the avatar is INIT); empty otherwise.
    .addColumn("error", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("avatar_looks").execute();
}
