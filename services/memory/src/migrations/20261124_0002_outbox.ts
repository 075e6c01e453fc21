import { createOutboxTable } from "@avatar/runtime";
import type { Kysely } from "kysely";

/** memory.created events leave through an outbox written in the transaction that creates the memory. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createOutboxTable(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("outbox").execute();
}
