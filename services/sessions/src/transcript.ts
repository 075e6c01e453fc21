import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import type { SessionsDatabase, TranscriptEntryRow } from "./schema.js";

/**
 * Transcript entries. Reads filter on absolute_timestamp (Unix ms): start inclusive, end exclusive, in
 * time order; a poller passes `next` as its next start.
 */

type Db = Kysely<SessionsDatabase> | Transaction<SessionsDatabase>;

export const TRANSCRIPT_ROLES = ["user", "avatar"] as const;

/** Most entries one read returns; a poller gets the rest with the next read. */
export const TRANSCRIPT_PAGE_LIMIT = 1000;

export interface NewTranscriptEntry {
  entryId: string;
  role: string;
  transcript: string;
  absoluteTimestamp: bigint;
  relativeTimestamp: bigint;
}

/** Writes entries; an entry id already stored for the session is skipped. Answers the new rows. */
export async function appendTranscript(
  db: Db,
  sessionId: string,
  entries: NewTranscriptEntry[],
  now: Date,
): Promise<TranscriptEntryRow[]> {
  if (entries.length === 0) return [];
  return db
    .insertInto("transcript_entries")
    .values(
      entries.map((e) => ({
        session_id: sessionId,
        entry_id: e.entryId || randomUUID(),
        role: e.role,
        transcript: e.transcript,
        absolute_timestamp: e.absoluteTimestamp,
        relative_timestamp: e.relativeTimestamp,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(["session_id", "entry_id"]).doNothing())
    .returningAll()
    .execute();
}

export interface TranscriptWindow {
  entries: TranscriptEntryRow[];
  /** The start to pass next: one past the last entry returned, or the start asked for when none was. */
  next: bigint;
}

export async function readTranscript(
  db: Db,
  sessionId: string,
  start: bigint | undefined,
  end: bigint | undefined,
  limit = TRANSCRIPT_PAGE_LIMIT,
): Promise<TranscriptWindow> {
  let query = db.selectFrom("transcript_entries").selectAll().where("session_id", "=", sessionId);
  if (start !== undefined) query = query.where("absolute_timestamp", ">=", String(start));
  if (end !== undefined) query = query.where("absolute_timestamp", "<", String(end));
  const rows = await query
    .orderBy("absolute_timestamp")
    .orderBy("id")
    .limit(limit + 1)
    .execute();
  let entries = rows;
  const overflow = rows[limit];
  if (overflow) {
    // The page must not end inside one millisecond: the next read starts one past the last timestamp
    // returned and would skip the rest of it.
    entries = rows.slice(0, limit).filter((r) => r.absolute_timestamp !== overflow.absolute_timestamp);
    if (entries.length === 0) {
      // More than a page of entries in a single millisecond: that millisecond whole, then.
      entries = await db
        .selectFrom("transcript_entries")
        .selectAll()
        .where("session_id", "=", sessionId)
        .where("absolute_timestamp", "=", overflow.absolute_timestamp)
        .orderBy("id")
        .execute();
    }
  }
  const last = entries.at(-1);
  return { entries, next: last ? BigInt(last.absolute_timestamp) + 1n : (start ?? 0n) };
}
