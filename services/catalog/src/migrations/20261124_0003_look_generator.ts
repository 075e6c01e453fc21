import type { Kysely } from "kysely";

/** Which version of the look generator drew a cached generated look ('' before versions were kept). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("avatar_looks")
    .addColumn("generator", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("avatar_looks").dropColumn("generator").execute();
}
