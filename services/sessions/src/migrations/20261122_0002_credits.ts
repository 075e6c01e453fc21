import { type Kysely, sql } from "kysely";

/**
 * Per-space balances and the ledger they follow. The ledger is append-only (a trigger refuses updates,
 * deletes and truncation) and the balance never goes negative. A session-minute is charged at most once:
 * the database refuses a second charge row for the same (session, minute).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("credit_accounts")
    .addColumn("space_id", "uuid", (c) => c.primaryKey())
    .addColumn("balance", sql`numeric(20, 4)`, (c) => c.notNull().defaultTo(0).check(sql`balance >= 0`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("ledger")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("space_id", "uuid", (c) => c.notNull())
    .addColumn("kind", "text", (c) =>
      c.notNull().check(sql`kind in ('grant', 'escrow', 'escrow_release', 'charge')`),
    )
    .addColumn("amount", sql`numeric(20, 4)`, (c) => c.notNull())
    .addColumn("session_id", "uuid", (c) => c.references("sessions.id"))
    .addColumn("minute_index", "integer")
    .addColumn("note", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("idempotency_key", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addCheckConstraint(
      "ledger_charge_shape",
      sql`kind <> 'charge' or (session_id is not null and minute_index is not null and amount < 0)`,
    )
    .addCheckConstraint("ledger_grant_shape", sql`kind <> 'grant' or amount > 0`)
    .execute();
  await db.schema
    .createIndex("ledger_charge_once")
    .on("ledger")
    .columns(["session_id", "minute_index"])
    .unique()
    .where(sql<boolean>`kind = 'charge'`)
    .execute();
  await db.schema
    .createIndex("ledger_grant_idempotency")
    .on("ledger")
    .columns(["space_id", "idempotency_key"])
    .unique()
    .where(sql<boolean>`kind = 'grant' and idempotency_key is not null`)
    .execute();
  await db.schema.createIndex("ledger_space_idx").on("ledger").columns(["space_id", "id"]).execute();
  await db.schema.createIndex("ledger_session_idx").on("ledger").columns(["session_id", "id"]).execute();

  await sql`
    create function ledger_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'the ledger is append-only';
    end
    $$`.execute(db);
  await sql`
    create trigger ledger_no_update_or_delete before update or delete on ledger
    for each row execute function ledger_append_only()`.execute(db);
  await sql`
    create trigger ledger_no_truncate before truncate on ledger
    for each statement execute function ledger_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("ledger").execute();
  await sql`drop function ledger_append_only()`.execute(db);
  await db.schema.dropTable("credit_accounts").execute();
}
