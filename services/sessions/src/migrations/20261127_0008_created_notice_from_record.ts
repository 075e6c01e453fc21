import { type Kysely, sql } from "kysely";

/**
 * A session's `session.created` notice is no longer a stored event: it is read from the session record
 * (its id and `created_at`), unless the session's history was deleted, which `history_deleted_at` now
 * records. Writing the notice with every new session was about a third of Postgres's time for a mint.
 * Stored notices become that column: a session without one had its history deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("sessions").addColumn("history_deleted_at", "timestamptz").execute();
  await sql`update sessions s set history_deleted_at = now()
    where not exists (
      select 1 from session_events e where e.session_id = s.id and e.type = 'session.created'
    )`.execute(db);
  await sql`delete from session_events where type = 'session.created'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`insert into session_events (id, session_id, type, payload, created_at)
    select gen_random_uuid(), s.id, 'session.created', '{}'::jsonb, s.created_at from sessions s
    where s.history_deleted_at is null`.execute(db);
  await db.schema.alterTable("sessions").dropColumn("history_deleted_at").execute();
}
