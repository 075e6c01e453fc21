import { type Kysely, sql } from "kysely";

/**
 * Moving a running session to another pipeline worker:
 * - `worker_epoch`: the ownership epoch (fencing token), 1 for the worker that started the session and
 *   incremented on every takeover;
 * - `worker_seen_at`: the last moment the owner was heard serving the session (its heartbeats);
 * - `takeover_deadline_at`: set when the owner is lost or hands the session over; the session is offered
 *   to the workers until then, and ends with SERVER_ERROR at it when none took it;
 * - `takeover_attempt_at`: when a replica last offered it (replicas take turns).
 * The generated `due_at` is rebuilt: it includes the takeover deadline, and a minute's charge falls due
 * only once the owner has been heard serving after the minute began (or when no worker runs the session).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("sessions")
    .addColumn("worker_epoch", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("worker_seen_at", "timestamptz")
    .addColumn("takeover_deadline_at", "timestamptz")
    .addColumn("takeover_attempt_at", "timestamptz")
    .execute();
  // Sessions running when this is applied belong to the worker that started them.
  await sql`update sessions set worker_epoch = 1, worker_seen_at = updated_at
    where worker_id is not null and state = 'STARTED'`.execute(db);
  await rebuildDueAt(
    db,
    sql`least(start_deadline_at, idle_deadline_at, max_end_at, worker_deadline_at, takeover_deadline_at,
      case when worker_seen_at is null or worker_seen_at > next_charge_at then next_charge_at end)`,
  );
  await db.schema
    .createIndex("sessions_takeover_idx")
    .on("sessions")
    .column("takeover_deadline_at")
    .where(sql<boolean>`state = 'STARTED' and takeover_deadline_at is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("sessions_takeover_idx").execute();
  await rebuildDueAt(
    db,
    sql`least(start_deadline_at, idle_deadline_at, max_end_at, next_charge_at, worker_deadline_at)`,
  );
  await db.schema
    .alterTable("sessions")
    .dropColumn("takeover_attempt_at")
    .dropColumn("takeover_deadline_at")
    .dropColumn("worker_seen_at")
    .dropColumn("worker_epoch")
    .execute();
}

/** Drops and adds the generated column again (every Postgres version can), with its partial index. */
async function rebuildDueAt(db: Kysely<unknown>, expression: ReturnType<typeof sql>): Promise<void> {
  await db.schema.dropIndex("sessions_due_idx").execute();
  await db.schema.alterTable("sessions").dropColumn("due_at").execute();
  await db.schema
    .alterTable("sessions")
    .addColumn("due_at", "timestamptz", (c) => c.generatedAlwaysAs(expression).stored())
    .execute();
  await db.schema
    .createIndex("sessions_due_idx")
    .on("sessions")
    .column("due_at")
    .where(sql<boolean>`state <> 'ENDED'`)
    .execute();
}
