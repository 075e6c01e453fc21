import { type Kysely, sql } from "kysely";

/** The hosts a space bound to a secret besides its provider's own (finding 2 of the security review). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("secrets")
    .addColumn("allowed_hosts", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("secrets").dropColumn("allowed_hosts").execute();
}
