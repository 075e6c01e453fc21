import { creditsCharged, type JoinedInsert } from "@avatar/runtime";
import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type QueryCreator,
  type SqlBool,
  sql,
  type Transaction,
} from "kysely";
import { type VersionedRow, versionColumn } from "./repository.js";
import type { SessionModeValue, SessionSourceValue, SessionsDatabase } from "./schema.js";

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
 * One statement that holds minute 0 (the session's rate) for the session `sessionId` when `only` holds of
 * its row: the debit of the space's balance when it covers it, the escrow's ledger row and the session's
 * escrow, all or none; `updated` answers the session as held, with its new version. The session's row is
 * locked first, then the balance: every start in the space needs that one row, so callers make the hold
 * their last write, and the lock is held for the commit alone.
 */
function holdStatement(
  db: Db,
  sessionId: string,
  at: Date,
  only: (eb: ExpressionBuilder<SessionsDatabase, "sessions">) => Expression<SqlBool>,
) {
  return db
    .with("target", (q) =>
      q
        .selectFrom("sessions")
        .select(["id", "space_id", "credit_rate"])
        .where("id", "=", sessionId)
        .where(only)
        .forUpdate(),
    )
    .with("debited", (q) =>
      q
        .updateTable("credit_accounts")
        .from("target")
        .set({ balance: sql`credit_accounts.balance - target.credit_rate`, updated_at: at })
        .whereRef("credit_accounts.space_id", "=", "target.space_id")
        .whereRef("credit_accounts.balance", ">=", "target.credit_rate")
        .returning(["credit_accounts.space_id", "target.id", "target.credit_rate"]),
    )
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
              sql<string>`(-debited.credit_rate)::numeric`.as("amount"),
              "debited.id",
              sql<null>`null::integer`.as("minute_index"),
              sql<null>`null::text`.as("idempotency_key"),
              sql<Date>`${at}::timestamptz`.as("created_at"),
            ]),
        ),
    )
    .with("updated", (q) =>
      q
        .updateTable("sessions")
        .from("debited")
        .set({ escrow_amount: sql`debited.credit_rate`, updated_at: at })
        .whereRef("sessions.id", "=", "debited.id")
        .returningAll("sessions")
        .returning(sql<string>`sessions.xmin::text`.as("version")),
    );
}

/**
 * Holds minute 0 of a starting session whose row the caller read (CREATED, a rate, no escrow yet).
 * Answers the session as held, with its new version, or undefined (nothing changed) when the balance
 * cannot cover it, or when `version` is given and the session is no longer that version (the caller
 * then decides again under the row's lock).
 */
export function holdEscrow(
  db: Db,
  sessionId: string,
  at: Date,
  version?: string,
): Promise<VersionedRow | undefined> {
  return holdStatement(db, sessionId, at, () =>
    version ? sql<boolean>`xmin = ${version}::xid` : sql<boolean>`true`,
  )
    .selectFrom("updated")
    .selectAll()
    .executeTakeFirst();
}

/** A session as one statement found it, and whether that statement held its minute 0 (holdOrRead). */
export interface HeldOrRead {
  row: VersionedRow;
  held: boolean;
}

/**
 * The first step of a start in one statement: minute 0 is held, as holdEscrow does, when the session
 * needs it and nothing else is in the way (CREATED, in `spaceId` when given, its start deadline not
 * passed at `at`, a rate, no escrow yet, a balance that covers it); otherwise the row is answered as it
 * is, with its version, for the caller to decide on (held: false). Undefined: no such session. A start
 * used to read the row and then hold: one round trip fewer for every start that pays.
 */
export async function holdOrRead(
  db: Kysely<SessionsDatabase>,
  s: { sessionId: string; spaceId: string | undefined; at: Date },
): Promise<HeldOrRead | undefined> {
  const found = await holdStatement(db, s.sessionId, s.at, (eb) =>
    eb.and([
      sql<boolean>`state = 'CREATED' and escrow_amount = 0 and credit_rate > 0`,
      eb.or([eb("start_deadline_at", "is", null), eb("start_deadline_at", ">", s.at)]),
      ...(s.spaceId === undefined ? [] : [eb("space_id", "=", s.spaceId.toLowerCase())]),
    ]),
  )
    .selectFrom("updated")
    .selectAll()
    .select(sql<boolean>`true`.as("held"))
    .unionAll((eb) =>
      eb
        .selectFrom("sessions")
        .selectAll()
        .select([versionColumn, sql<boolean>`false`.as("held")])
        .where("id", "=", s.sessionId)
        .where(sql<boolean>`not exists (select from updated)`),
    )
    .executeTakeFirst();
  if (!found) return undefined;
  const { held, ...row } = found;
  return { row, held };
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
