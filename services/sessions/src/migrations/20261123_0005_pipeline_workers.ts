import { type Kysely, sql } from "kysely";

/**
 * The pipeline worker of a started session and its liveness deadline, which becomes one more timer: the
 * generated `due_at` is rebuilt to include it (dropped and added again, which every Postgres version can
 * do, together with its partial index).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("sessions")
    .addColumn("worker_id", "text")
    .addColumn("worker_deadline_at", "timestamptz")
    .execute();
  await db.schema.dropIndex("sessions_due_idx").execute();
  await db.schema.alterTable("sessions").dropColumn("due_at").execute();
  await db.schema
    .alterTable("sessions")
    .addColumn("due_at", "timestamptz", (c) =>
      c
        .generatedAlwaysAs(
          sql`least(start_deadline_at, idle_deadline_at, max_end_at, next_charge_at, worker_deadline_at)`,
        )
        .stored(),
    )
    .execute();
  await db.schema
    .createIndex("sessions_due_idx")
    .on("sessions")
    .column("due_at")
    .where(sql<boolean>`state <> 'ENDED'`)
    .execute();
  await db.schema
    .createIndex("sessions_worker_idx")
    .on("sessions")
    .column("worker_id")
    .where(sql<boolean>`state = 'STARTED'`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("sessions_worker_idx").execute();
  await db.schema.dropIndex("sessions_due_idx").execute();
  await db.schema.alterTable("sessions").dropColumn("due_at").execute();
  await db.schema
    .alterTable("sessions")
    .addColumn("due_at", "timestamptz", (c) =>
      c
        .generatedAlwaysAs(sql`least(start_deadline_at, idle_deadline_at, max_end_at, next_charge_at)`)
        .stored(),
    )
    .execute();
  await db.schema
    .createIndex("sessions_due_idx")
    .on("sessions")
    .column("due_at")
    .where(sql<boolean>`state <> 'ENDED'`)
    .execute();
  await db.schema.alterTable("sessions").dropColumn("worker_deadline_at").dropColumn("worker_id").execute();
}
