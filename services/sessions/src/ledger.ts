import { creditsCharged, type JoinedInsert } from "@avatar/runtime";
import { type Kysely, type QueryCreator, sql, type Transaction, type Updateable } from "kysely";
import { type VersionedRow, versionColumn } from "./repository.js";
import type { SessionModeValue, SessionSourceValue, SessionsDatabase, SessionTable } from "./schema.js";

/**
 * Credits: one balance per space and the append-only ledger it follows. Every change of a balance is
 * made in the same transaction as the ledger row that explains it, so the balance always equals the sum
 * of the space's ledger amounts.
 */

type Db = Kysely<SessionsDatabase> | Transaction<SessionsDatabase>;

/** FULL and embed sessions cost 2 credits a minute, LITE 1, sandbox nothing. */
export function creditRate(mode: SessionModeValue, source: SessionSourceValue, isSandbox: boolean): number {
  if (isSandbox) return 0;
  return mode === "FULL" || source === "EMBED" ? 2 : 1;
}

/** "118.5000" -> "118.5", "100.0000" -> "100". */
export function formatCredits(value: string): string {
  if (!value.includes(".")) return value;
  return value.replace(/0+$/, "").replace(/\.$/, "");
}

/** A positive decimal with at most 4 decimals, or undefined. */
export function parseCreditAmount(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^\d{1,16}(\.\d{1,4})?$/.test(trimmed) || !/[1-9]/.test(trimmed)) return undefined;
  return trimmed.replace(/^0+(?=\d)/, "");
}

export async function balanceOf(db: Db, spaceId: string): Promise<string> {
  const row = await db
    .selectFrom("credit_accounts")
    .select("balance")
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return formatCredits(row?.balance ?? "0");
}

/** The update that takes `amount` from the balance if it covers it (no row otherwise). */
function debitQuery(db: QueryCreator<SessionsDatabase>, spaceId: string, amount: number, at: Date) {
  return db
    .updateTable("credit_accounts")
    .set({ balance: sql`balance - ${amount}`, updated_at: at })
    .where("space_id", "=", spaceId)
    .where("balance", ">=", String(amount))
    .returning("space_id");
}

/** Takes `amount` from the balance if it covers it; false (and nothing changed) otherwise. */
async function debit(trx: Transaction<SessionsDatabase>, spaceId: string, amount: number, at: Date) {
  return (await debitQuery(trx, spaceId, amount, at).executeTakeFirst()) !== undefined;
}

async function credit(
  trx: Transaction<SessionsDatabase>,
  spaceId: string,
  amount: string | number,
  at: Date,
) {
  await trx
    .insertInto("credit_accounts")
    .values({ space_id: spaceId, balance: amount, updated_at: at })
    .onConflict((oc) =>
      oc
        .column("space_id")
        .doUpdateSet({ balance: sql`credit_accounts.balance + ${amount}`, updated_at: at }),
    )
    .execute();
}

export type GrantResult = { kind: "granted" } | { kind: "repeated" } | { kind: "key_reused"; amount: string };

/** Adds credits; a grant with an idempotency key already used in the space counts once. */
export async function grant(
  trx: Transaction<SessionsDatabase>,
  input: { spaceId: string; amount: string; note: string; idempotencyKey: string | null; at: Date },
): Promise<GrantResult> {
  const inserted = await trx
    .insertInto("ledger")
    .values({
      space_id: input.spaceId,
      kind: "grant",
      amount: input.amount,
      note: input.note,
      idempotency_key: input.idempotencyKey,
      session_id: null,
      minute_index: null,
      created_at: input.at,
    })
    .onConflict((oc) =>
      oc
        .columns(["space_id", "idempotency_key"])
        .where(sql<boolean>`kind = 'grant' and idempotency_key is not null`)
        .doNothing(),
    )
    .returning("id")
    .executeTakeFirst();
  if (inserted) {
    await credit(trx, input.spaceId, input.amount, input.at);
    return { kind: "granted" };
  }
  const earlier = await trx
    .selectFrom("ledger")
    .select("amount")
    .where("space_id", "=", input.spaceId)
    // A literal, as in ledger_grant_idempotency's predicate (repository.ts says why).
    .where(sql<boolean>`kind = 'grant'`)
    .where("idempotency_key", "=", input.idempotencyKey)
    .executeTakeFirstOrThrow();
  const same = formatCredits(earlier.amount) === formatCredits(input.amount);
  return same ? { kind: "repeated" } : { kind: "key_reused", amount: formatCredits(earlier.amount) };
}

interface SessionMoney {
  spaceId: string;
  sessionId: string;
  amount: number;
  at: Date;
}

/**
 * Holds `amount` for a starting session and records the hold on the session (`changes`): the debit, its
 * ledger row and the session's update in one statement, all or none. Answers the updated session with
 * its new version, or undefined (nothing changed) when the balance cannot cover it, or when `version`
 * is given and the session is no longer that version (the caller then decides again under the row's
 * lock). The debit locks the space's balance, which every start in the space needs, until the
 * transaction ends: callers make it their last write, so the lock is held for the commit alone.
 */
export async function holdEscrow(
  db: Db,
  m: SessionMoney,
  changes: Updateable<SessionTable>,
  version?: string,
): Promise<VersionedRow | undefined> {
  // With a version, the debit is made only while the session is that version (its row locked).
  const base = (
    version
      ? db.with("target", (q) =>
          q
            .selectFrom("sessions")
            .select("id")
            .where("id", "=", m.sessionId)
            .where(sql<boolean>`xmin = ${version}::xid`)
            .forUpdate(),
        )
      : db
  ) as QueryCreator<SessionsDatabase>;
  return base
    .with("debited", (q) => {
      const debit = debitQuery(q, m.spaceId, m.amount, m.at);
      return version ? debit.where(sql<boolean>`exists (select from target)`) : debit;
    })
    .with("held", (q) =>
      q
        .insertInto("ledger")
        .columns([
          "space_id",
          "kind",
          "amount",
          "session_id",
          "minute_index",
          "idempotency_key",
          "created_at",
        ])
        .expression((eb) =>
          eb
            .selectFrom("debited")
            .select([
              "debited.space_id",
              sql<string>`'escrow'`.as("kind"),
              sql<string>`${String(-m.amount)}::numeric`.as("amount"),
              sql<string>`${m.sessionId}::uuid`.as("session_id"),
              sql<null>`null::integer`.as("minute_index"),
              sql<null>`null::text`.as("idempotency_key"),
              sql<Date>`${m.at}::timestamptz`.as("created_at"),
            ]),
        ),
    )
    .updateTable("sessions")
    .set(changes)
    .where("id", "=", m.sessionId)
    .where(sql<boolean>`exists (select from debited)`)
    .returningAll()
    .returning(versionColumn)
    .executeTakeFirst();
}

/** Gives a held amount back (the start failed, or the session ended before it completed). */
export async function releaseEscrow(trx: Transaction<SessionsDatabase>, m: SessionMoney): Promise<void> {
  await credit(trx, m.spaceId, m.amount, m.at);
  await insertRows(trx, [ledgerValues(m, "escrow_release", m.amount, null)]);
}

/**
 * The held amount becomes the charge of minute 0, released and charged in one step, balance unchanged:
 * its ledger rows, written by the statement that completes the start (the caller counts the charge).
 */
export function settleEscrowAsFirstMinute(m: SessionMoney): JoinedInsert {
  return {
    into: "ledger",
    rows: [ledgerValues(m, "escrow_release", m.amount, null), ledgerValues(m, "charge", -m.amount, 0)],
  };
}

export type ChargeResult = "charged" | "already_charged" | "insufficient";

/**
 * Charges one session-minute. The unique index on (session, minute) of charge rows makes a second charge
 * of the same minute impossible, whoever tries it; when it has been charged already the debit is undone
 * in the same transaction.
 */
export async function chargeMinute(
  trx: Transaction<SessionsDatabase>,
  m: SessionMoney & { minuteIndex: number },
): Promise<ChargeResult> {
  if (!(await debit(trx, m.spaceId, m.amount, m.at))) return "insufficient";
  const row = await trx
    .insertInto("ledger")
    .values(ledgerValues(m, "charge", -m.amount, m.minuteIndex))
    .onConflict((oc) =>
      oc.columns(["session_id", "minute_index"]).where(sql<boolean>`kind = 'charge'`).doNothing(),
    )
    .returning("id")
    .executeTakeFirst();
  if (row) {
    // Counted as written: a transaction that rolls back afterwards (rare) leaves the count a little high.
    creditsCharged.inc(m.amount);
    return "charged";
  }
  await credit(trx, m.spaceId, m.amount, m.at);
  return "already_charged";
}

function ledgerValues(
  m: SessionMoney,
  kind: "escrow" | "escrow_release" | "charge",
  amount: number,
  minute: number | null,
) {
  return {
    space_id: m.spaceId,
    kind,
    amount,
    session_id: m.sessionId,
    minute_index: minute,
    idempotency_key: null,
    created_at: m.at,
  };
}

/** Ledger rows written by one statement, in the order given. */
async function insertRows(trx: Transaction<SessionsDatabase>, rows: ReturnType<typeof ledgerValues>[]) {
  await trx.insertInto("ledger").values(rows).execute();
}

/** Newest first. */
export async function listLedger(
  db: Db,
  filter: { spaceId: string; sessionId?: string | undefined },
  offset: number,
  limit: number,
) {
  let base = db.selectFrom("ledger").where("space_id", "=", filter.spaceId);
  if (filter.sessionId) base = base.where("session_id", "=", filter.sessionId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id", "desc").offset(offset).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}
