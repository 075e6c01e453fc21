import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import type { SessionsDatabase } from "./schema.js";

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

/** In the order they were written. */
export function listSessionEvents(db: Db, sessionId: string) {
  return db
    .selectFrom("session_events")
    .selectAll()
    .where("session_id", "=", sessionId)
    .orderBy("seq")
    .execute();
}

/** Removes every stored event and transcript entry of a session for good; the record itself stays. */
export async function deleteSessionHistory(trx: Transaction<SessionsDatabase>, sessionId: string) {
  const events = await trx
    .deleteFrom("session_events")
    .where("session_id", "=", sessionId)
    .executeTakeFirst();
  const entries = await trx
    .deleteFrom("transcript_entries")
    .where("session_id", "=", sessionId)
    .executeTakeFirst();
  return { events: Number(events.numDeletedRows), transcriptEntries: Number(entries.numDeletedRows) };
}
