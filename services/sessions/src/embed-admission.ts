import { EMBED_PENDING_START_MS, insufficientCredits, limitReached } from "@avatar/runtime";
import { sql, type Transaction } from "kysely";
import type { SessionsDatabase } from "./schema.js";

export interface EmbedAdmissionInput {
  spaceId: string;
  embedId: string;
  /** Credits a minute of the new session costs (0 for sandbox). */
  creditRate: number;
  maxConcurrentSessions: number;
  maxSessionsPerHour: number;
  now: Date;
}

/**
 * Whether an embed's visitor may have a session now, checked in the transaction that creates it and one
 * embed at a time (an advisory lock on the embed), so concurrent visitors cannot overshoot: fewer than
 * max_concurrent_sessions running (started, or minted within EMBED_PENDING_START_MS and not started),
 * fewer than max_sessions_per_hour minted in the last hour, and credits for the first minute. A session
 * that could not start is never created (finding 4 of the security review).
 */
export async function admitEmbedSession(trx: Transaction<SessionsDatabase>, a: EmbedAdmissionInput) {
  await sql`select pg_advisory_xact_lock(hashtext(${`embed-admission:${a.embedId}`}))`.execute(trx);
  const hourAgo = new Date(a.now.getTime() - 3_600_000);
  const pendingSince = new Date(a.now.getTime() - EMBED_PENDING_START_MS);
  const counts = await trx
    .selectFrom("sessions")
    .select([
      sql<string>`count(*) filter (where state = 'STARTED' or (state = 'CREATED' and created_at > ${pendingSince}))`.as(
        "running",
      ),
      sql<string>`count(*) filter (where created_at > ${hourAgo})`.as("last_hour"),
    ])
    .where("embed_id", "=", a.embedId)
    .where((eb) => eb.or([eb("state", "<>", "ENDED"), eb("created_at", ">", hourAgo)]))
    .executeTakeFirstOrThrow();
  if (Number(counts.running) >= a.maxConcurrentSessions) {
    throw limitReached("the embed has as many sessions running as its owner allows", "EMBED_BUSY");
  }
  if (Number(counts.last_hour) >= a.maxSessionsPerHour) {
    throw limitReached(
      "the embed has had as many sessions this hour as its owner allows",
      "EMBED_HOURLY_LIMIT",
    );
  }
  if (a.creditRate > 0) {
    const account = await trx
      .selectFrom("credit_accounts")
      .select("balance")
      .where("space_id", "=", a.spaceId)
      .executeTakeFirst();
    if (Number(account?.balance ?? 0) < a.creditRate) throw insufficientCredits();
  }
}
