import { randomBytes } from "node:crypto";
import { type JoinedInsert, runInsert, sha256Hex } from "@avatar/runtime";
import type { Kysely, Transaction } from "kysely";
import type { SessionsDatabase } from "./schema.js";

/**
 * Connect tickets: the short-lived, single-use secret a ws_url carries. Only its hash is stored, so the
 * table never holds a usable ticket.
 */

export interface NewTicket {
  ticket: string;
  expiresAt: Date;
  /** The row of the ticket's hash, written by the statement of the start it answers. */
  insert: JoinedInsert;
}

/** A fresh ticket for the session, stored by whichever statement makes `insert`. */
export function newTicket(sessionId: string, now: Date, ttlMs: number): NewTicket {
  const ticket = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now.getTime() + ttlMs);
  const row = {
    ticket_hash: sha256Hex(ticket),
    session_id: sessionId,
    created_at: now,
    expires_at: expiresAt,
  };
  return { ticket, expiresAt, insert: { into: "connect_tickets", rows: [row] } };
}

/** A fresh ticket for the session, stored by a statement of its own. */
export async function issueTicket(
  trx: Transaction<SessionsDatabase>,
  sessionId: string,
  now: Date,
  ttlMs: number,
): Promise<{ ticket: string; expiresAt: Date }> {
  const { ticket, expiresAt, insert } = newTicket(sessionId, now, ttlMs);
  await runInsert<SessionsDatabase>(trx, insert);
  return { ticket, expiresAt };
}

/** Marks the ticket used and answers its session; undefined when unknown, used or expired. */
export async function redeemTicket(
  trx: Transaction<SessionsDatabase>,
  ticket: string,
  now: Date,
): Promise<string | undefined> {
  const row = await trx
    .updateTable("connect_tickets")
    .set({ used_at: now })
    .where("ticket_hash", "=", sha256Hex(ticket))
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .returning("session_id")
    .executeTakeFirst();
  return row?.session_id;
}

/** Forgets tickets that expired more than `keepMs` ago. */
export async function deleteExpiredTickets(
  db: Kysely<SessionsDatabase>,
  now: Date,
  keepMs: number,
): Promise<number> {
  const res = await db
    .deleteFrom("connect_tickets")
    .where("expires_at", "<", new Date(now.getTime() - keepMs))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
