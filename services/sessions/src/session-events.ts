import { randomUUID } from "node:crypto";
import { type Kysely, sql, type Transaction } from "kysely";
import type { SessionEventRow, SessionRow, SessionsDatabase } from "./schema.js";

/** Stored session events: lifecycle notices written here and realtime notices written by the pipeline. */

type Db = Kysely<SessionsDatabase> | Transaction<SessionsDatabase>;

export interface NewSessionEvent {
  /** Chosen by the writer to make a retried write count once; generated when empty. */
  id?: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** The stored row of one session event. */
export function sessionEventRow(sessionId: string, e: NewSessionEvent) {
  return {
    id: e.id || randomUUID(),
    session_id: sessionId,
    type: e.type,
    payload: JSON.stringify(e.payload),
    created_at: e.createdAt,
  };
}

/** Writes events; an id already stored is skipped. Answers how many were new. */
export async function appendSessionEvents(
  db: Db,
  sessionId: string,
  events: NewSessionEvent[],
): Promise<number> {
  if (events.length === 0) return 0;
  const rows = await db
    .insertInto("session_events")
    .values(events.map((e) => sessionEventRow(sessionId, e)))
    .onConflict((oc) => oc.column("id").doNothing())
    .returning("id")
    .execute();
  return rows.length;
}

/**
 * Writes the events of several sessions in one statement, in order; those of a session that does not
 * exist are not written, and an id already stored is skipped. Answers how many were new, and the
 * sessions that do not exist.
 */
export async function appendEventsOfSessions(
  db: Db,
  groups: { sessionId: string; events: NewSessionEvent[] }[],
): Promise<{ written: number; unknown: string[] }> {
  const rows = groups.flatMap((g) => g.events.map((e) => sessionEventRow(g.sessionId, e)));
  const sessionIds = [...new Set(groups.map((g) => g.sessionId))];
  if (sessionIds.length === 0) return { written: 0, unknown: [] };
  const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  const {
    rows: [result],
  } = await sql<{ written: number; known: string[] }>`
    with known as (select id from sessions where id = any(${sessionIds}::uuid[])),
    written as (
      insert into session_events (id, session_id, type, payload, created_at)
      select e.id, e.session_id, e.type, e.payload, e.created_at
      from unnest(${column("id")}::uuid[], ${column("session_id")}::uuid[], ${column("type")}::text[],
        ${column("payload")}::jsonb[], ${column("created_at")}::timestamptz[])
        with ordinality as e(id, session_id, type, payload, created_at, n)
      where e.session_id in (select id from known)
      order by e.n
      on conflict (id) do nothing
      returning 1
    )
    select (select count(*) from written)::int as written,
      array(select id::text from known) as known`.execute(db);
  const known = new Set(result?.known ?? []);
  return { written: result?.written ?? 0, unknown: sessionIds.filter((id) => !known.has(id)) };
}

/** What a session's history is read with: its record's id, creation and whether its history was deleted. */
export type HistoryOf = Pick<SessionRow, "id" | "created_at" | "history_deleted_at">;

/**
 * The session.created notice every history begins with. It is not stored: it says no more than the
 * record, and writing it with each new session cost a third of Postgres's time for a mint. Its id is
 * the session's.
 */
function createdNotice(session: HistoryOf): SessionEventRow {
  return {
    id: session.id,
    seq: "0",
    session_id: session.id,
    type: "session.created",
    payload: {},
    created_at: session.created_at,
  };
}

/** In the order they were written, after the session.created notice (gone once the history is deleted). */
export async function listSessionEvents(db: Db, session: HistoryOf): Promise<SessionEventRow[]> {
  const stored = await db
    .selectFrom("session_events")
    .selectAll()
    .where("session_id", "=", session.id)
    .orderBy("seq")
    .execute();
  return session.history_deleted_at ? stored : [createdNotice(session), ...stored];
}

/**
 * Removes every event (the session.created notice included) and transcript entry of a session for good;
 * the record itself stays. Answers how many of each went.
 */
export async function deleteSessionHistory(trx: Transaction<SessionsDatabase>, sessionId: string, at: Date) {
  const notice = await trx
    .updateTable("sessions")
    .set({ history_deleted_at: at })
    .where("id", "=", sessionId)
    .where("history_deleted_at", "is", null)
    .executeTakeFirst();
  const events = await trx
    .deleteFrom("session_events")
    .where("session_id", "=", sessionId)
    .executeTakeFirst();
  const entries = await trx
    .deleteFrom("transcript_entries")
    .where("session_id", "=", sessionId)
    .executeTakeFirst();
  return {
    events: Number(notice.numUpdatedRows) + Number(events.numDeletedRows),
    transcriptEntries: Number(entries.numDeletedRows),
  };
}
