import { type JoinedInsert, joinInserts, joinInsertsIf } from "@avatar/runtime";
import { type Insertable, type Kysely, sql, type Transaction, type Updateable } from "kysely";
import type { SessionRow, SessionsDatabase, SessionTable } from "./schema.js";

/** Plain data access for session records; every function takes the db (or a transaction). */

type Db = Kysely<SessionsDatabase> | Transaction<SessionsDatabase>;

/**
 * Conditions on the state written as the partial indexes' predicates are, with the state a literal: the
 * plan Postgres keeps for a prepared statement after five runs knows no parameter's value, and uses a
 * partial index only when the query implies its predicate without one. With `state <> $1` the timers'
 * round read the whole table.
 */
const running = sql<boolean>`state <> 'ENDED'`;
const started = sql<boolean>`state = 'STARTED'`;

/** Inserts the session; undefined when a session with its id exists already. */
export function insertSession(db: Db, values: Insertable<SessionTable>): Promise<SessionRow | undefined> {
  return db
    .insertInto("sessions")
    .values(values)
    .onConflict((oc) => oc.column("id").doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The row, locked for the rest of the transaction (waits for another holder). */
export function lockSession(trx: Transaction<SessionsDatabase>, id: string): Promise<SessionRow | undefined> {
  return trx.selectFrom("sessions").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** The row, share-locked for the rest of the transaction (changes of it wait, reads do not). */
export function shareLockSession(
  trx: Transaction<SessionsDatabase>,
  id: string,
): Promise<SessionRow | undefined> {
  return trx.selectFrom("sessions").selectAll().where("id", "=", id).forShare().executeTakeFirst();
}

/** The row if it is still due and nobody else holds it; undefined otherwise (another replica has it). */
export function claimDueSession(
  trx: Transaction<SessionsDatabase>,
  id: string,
  now: Date,
): Promise<SessionRow | undefined> {
  return trx
    .selectFrom("sessions")
    .selectAll()
    .where("id", "=", id)
    .where("state", "<>", "ENDED")
    .where("due_at", "<=", now)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

export async function updateSession(
  db: Db,
  id: string,
  changes: Updateable<SessionTable>,
): Promise<SessionRow> {
  return db
    .updateTable("sessions")
    .set(changes)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** As updateSession, with `inserts` (the change's notice and event) made by the same statement. */
export async function updateSessionWith(
  trx: Transaction<SessionsDatabase>,
  id: string,
  changes: Updateable<SessionTable>,
  inserts: readonly JoinedInsert[],
): Promise<SessionRow> {
  return joinInserts<SessionsDatabase>(trx, inserts)
    .updateTable("sessions")
    .set(changes)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A session row with its version: Postgres's `xmin`, the transaction that wrote this version of the
 * row, which changes with every update. A change made on condition that the row is still the version
 * read needs no lock and no transaction (updateIfVersion).
 */
export type VersionedRow = SessionRow & { version: string };

export const versionColumn = sql<string>`xmin::text`.as("version");

export function findVersioned(db: Db, id: string): Promise<VersionedRow | undefined> {
  return db.selectFrom("sessions").selectAll().select(versionColumn).where("id", "=", id).executeTakeFirst();
}

/**
 * Updates the session only if it is still `row.version`, with `inserts` made by the same statement only
 * then: one statement, atomic without a transaction. Answers the updated row with its new version, or
 * undefined when the row had changed (nothing was written).
 */
export function updateIfVersion(
  db: Kysely<SessionsDatabase>,
  row: VersionedRow,
  changes: Updateable<SessionTable>,
  inserts: readonly JoinedInsert[],
): Promise<VersionedRow | undefined> {
  const changed = db.with("changed", (q) =>
    q
      .updateTable("sessions")
      .set(changes)
      .where("id", "=", row.id)
      .where(sql<boolean>`xmin = ${row.version}::xid`)
      .returningAll()
      .returning(versionColumn),
  );
  return joinInsertsIf(changed, "changed", inserts).selectFrom("changed").selectAll().executeTakeFirst();
}

/**
 * The row as `changes` will leave it, for what is written in the same statement as the change (its
 * notice's event). The generated `due_at` keeps its old value: nothing written from the row reads it.
 */
export function changedRow(row: SessionRow, changes: Updateable<SessionTable>): SessionRow {
  return { ...row, ...changes } as SessionRow;
}

/** Ids of sessions with a timer due, oldest first. */
export async function dueSessionIds(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("sessions")
    .select("id")
    .where(running)
    .where("due_at", "<=", now)
    .orderBy("due_at")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Gives every running session's lease at least until `deadline`. */
export async function extendWorkerDeadlines(db: Db, deadline: Date): Promise<void> {
  await db
    .updateTable("sessions")
    .set({ worker_deadline_at: deadline })
    .where(started)
    .where("worker_deadline_at", "<", deadline)
    .execute();
}

/** Ids of running sessions waiting for a new worker, the nearest deadline first. */
export async function waitingForTakeoverIds(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("sessions")
    .select("id")
    .where(started)
    .where("takeover_deadline_at", "is not", null)
    .orderBy("takeover_deadline_at")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function runningSessionIdsOnAvatar(db: Db, avatarId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("sessions")
    .select("id")
    .where("avatar_id", "=", avatarId)
    .where(running)
    .execute();
  return rows.map((r) => r.id);
}

export interface SessionFilter {
  spaceId: string;
  /** active: created or started; historic: ended. */
  type?: "active" | "historic" | undefined;
  avatarId?: string | undefined;
  embedId?: string | undefined;
  contextId?: string | undefined;
}

/** Newest first. */
export async function listSessions(db: Db, filter: SessionFilter, offset: number, limit: number) {
  let base = db.selectFrom("sessions").where("space_id", "=", filter.spaceId);
  if (filter.type === "active") base = base.where("state", "<>", "ENDED");
  if (filter.type === "historic") base = base.where("state", "=", "ENDED");
  if (filter.avatarId) base = base.where("avatar_id", "=", filter.avatarId);
  if (filter.embedId) base = base.where("embed_id", "=", filter.embedId);
  if (filter.contextId) base = base.where("context_id", "=", filter.contextId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("seq", "desc").offset(offset).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}
