import { type Kysely, sql } from "kysely";

/**
 * An embed's visitor limits, allowed origins and disabled flag (finding 4 of the security review).
 * Existing embeds get the defaults (runtime EMBED_DEFAULTS at the time of writing: 3 at once, 30 an
 * hour, no foreign origin), which also are the column defaults.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("embeds")
    .addColumn("max_concurrent_sessions", "integer", (c) => c.notNull().defaultTo(3))
    .addColumn("max_sessions_per_hour", "integer", (c) => c.notNull().defaultTo(30))
    .addColumn("allowed_origins", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("is_disabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("embeds")
    .dropColumn("updated_at")
    .dropColumn("is_disabled")
    .dropColumn("allowed_origins")
    .dropColumn("max_sessions_per_hour")
    .dropColumn("max_concurrent_sessions")
    .execute();
}
