import { sampleInto, sessionsByState, sessionsEnded, sessionsStarted } from "@avatar/runtime";
import { type Kysely, sql } from "kysely";
import type { SessionRow, SessionsDatabase } from "./schema.js";

/**
 * The sessions service's own metrics: sessions by state and mode (read from the table at scrape time,
 * so every replica reports the same global figure), and the lifecycle counters. Credits charged are
 * counted by the ledger where a charge is written.
 */
export function meterSessions(db: Kysely<SessionsDatabase>): () => void {
  return sampleInto(sessionsByState, async () => {
    const rows = await db
      .selectFrom("sessions")
      .select(["state", "mode", sql<string>`count(*)`.as("n")])
      .where(sql<boolean>`state <> 'ENDED'`)
      .groupBy(["state", "mode"])
      .execute();
    return rows.map((r) => ({ labels: { state: r.state, mode: r.mode }, value: Number(r.n) }));
  });
}

/** Counts a lifecycle notice as it is announced (inside the transition's transaction). */
export function countTransition(row: SessionRow, noticeType: string): void {
  if (noticeType === "session.started") sessionsStarted.inc({ mode: row.mode });
  else if (noticeType === "session.ended") {
    sessionsEnded.inc({ mode: row.mode, end_reason: row.end_reason ?? "UNKNOWN" });
  }
}
