import { SessionEndedSchema } from "@avatar/contracts/sessions";
import type { EndReasonName, JoinedInsert } from "@avatar/runtime";
import { outboxInsert, type Topic, topics } from "@avatar/runtime";
import { create, type Message } from "@bufbuild/protobuf";
import type { Transaction, Updateable } from "kysely";
import { chargeMinute, releaseEscrow } from "./ledger.js";
import { sessionToProto } from "./mapping.js";
import { countTransition } from "./metrics.js";
import { changedRow, updateSession, updateSessionWith } from "./repository.js";
import type { SessionRow, SessionsDatabase, SessionTable } from "./schema.js";
import { sessionEventRow } from "./session-events.js";
import type { SessionSettings } from "./settings.js";
import { type DueOptions, nextDueStep, servedAfter } from "./timers.js";

/**
 * The state changes of a session that several operations share: ending it, and bringing its timers up
 * to date. Each runs inside the caller's transaction, on a row the caller has locked.
 */

type Trx = Transaction<SessionsDatabase>;

/** No timer runs once a session has ended. */
const noTimers = {
  start_deadline_at: null,
  idle_deadline_at: null,
  max_end_at: null,
  next_charge_at: null,
  worker_deadline_at: null,
  takeover_deadline_at: null,
  takeover_attempt_at: null,
} satisfies Updateable<SessionTable>;

/**
 * The rows that record a lifecycle notice among the session's events and put its bus event in the
 * outbox, written by the statement of the change they announce (updateSessionWith, updateIfVersion).
 * `row` is the session as that change leaves it; `trx`, when the statement is one of a transaction's.
 * The caller counts the transition once the statement is made (countTransition).
 */
export function announcement<T extends Message>(
  trx: Trx | undefined,
  row: SessionRow,
  notice: { type: string; payload: Record<string, unknown> },
  event: { topic: Topic<T>; value: T; msgId: string },
  now: Date,
): JoinedInsert[] {
  const stored = sessionEventRow(row.id, { type: notice.type, payload: notice.payload, createdAt: now });
  return [
    { into: "session_events", rows: [stored] },
    outboxInsert(trx, event.topic, event.value, event.msgId, now),
  ];
}

/**
 * Ends a session that has not ended: at `at` (the moment its timer fired, the worker stopped serving it,
 * or now), for `reason`. When `vouched` (the session was served up to `at`), the minutes that began before
 * `at` are charged first; otherwise only those its worker was heard serving. A minute the balance cannot
 * pay ends it with NO_CREDITS at that minute instead.
 */
export async function endSession(
  trx: Trx,
  row: SessionRow,
  reason: EndReasonName,
  at: Date,
  now: Date,
  settings: SessionSettings,
  options: { vouched: boolean },
): Promise<SessionRow> {
  const charged = await chargeBegunMinutes(trx, row, at, now, settings, options.vouched);
  if (charged.state === "ENDED") return charged;
  return markEnded(trx, charged, reason, at, now);
}

async function markEnded(
  trx: Trx,
  row: SessionRow,
  reason: EndReasonName,
  at: Date,
  now: Date,
): Promise<SessionRow> {
  if (row.escrow_amount > 0) {
    await releaseEscrow(trx, {
      spaceId: row.space_id,
      sessionId: row.id,
      amount: row.escrow_amount,
      at: now,
    });
  }
  const end = endOf(trx, row, reason, at, now);
  const ended = await updateSessionWith(trx, row.id, end.changes, end.inserts);
  countTransition(ended, "session.ended");
  return ended;
}

/**
 * The end of a session at `at` for `reason`, once its minutes are charged and no escrow is left: the
 * row's changes and the rows written with them (its notice and event).
 */
export function endOf(trx: Trx | undefined, row: SessionRow, reason: EndReasonName, at: Date, now: Date) {
  const changes = {
    ...noTimers,
    state: "ENDED",
    end_reason: reason,
    ended_at: at,
    updated_at: now,
    escrow_amount: 0,
  } satisfies Updateable<SessionTable>;
  const ended = changedRow(row, changes);
  const inserts = announcement(
    trx,
    ended,
    { type: "session.ended", payload: { end_reason: reason } },
    // The session id is the message id of its end: whoever publishes it, it counts once.
    {
      topic: topics.sessionEnded,
      value: create(SessionEndedSchema, { session: sessionToProto(ended, now) }),
      msgId: ended.id,
    },
    now,
  );
  return { changes, inserts };
}

/** Whether ending the session at `at` writes only the end itself: no minute to charge, no escrow. */
export function endsAlone(row: SessionRow, at: Date): boolean {
  const minuteBegun = row.state === "STARTED" && row.next_charge_at && row.next_charge_at < at;
  return row.escrow_amount === 0 && !minuteBegun;
}

/** The minutes of a started session that began before `until` (and were served, unless `vouched`). */
async function chargeBegunMinutes(
  trx: Trx,
  row: SessionRow,
  until: Date,
  now: Date,
  settings: SessionSettings,
  vouched: boolean,
): Promise<SessionRow> {
  let current = row;
  for (;;) {
    const next = current.next_charge_at;
    if (current.state !== "STARTED" || !next || next.getTime() >= until.getTime()) return current;
    if (!vouched && !servedAfter(current, next)) return current;
    current = await chargeNextMinute(trx, current, next, now, settings);
  }
}

/** Charges minute `charged_minutes` (which began at `at`), or ends the session when it cannot be paid. */
async function chargeNextMinute(
  trx: Trx,
  row: SessionRow,
  at: Date,
  now: Date,
  settings: SessionSettings,
): Promise<SessionRow> {
  const minuteIndex = row.charged_minutes;
  const result = await chargeMinute(trx, {
    spaceId: row.space_id,
    sessionId: row.id,
    amount: row.credit_rate,
    minuteIndex,
    at,
  });
  if (result === "insufficient") return markEnded(trx, row, "NO_CREDITS", at, now);
  return updateSession(trx, row.id, {
    charged_minutes: minuteIndex + 1,
    next_charge_at: new Date(at.getTime() + settings.SESSION_MINUTE_MS),
    credits_consumed: row.credits_consumed + (result === "charged" ? row.credit_rate : 0),
    updated_at: now,
  });
}

/**
 * Applies every timer step due at `now` in time order: charges the minutes that began, ends the session
 * when a deadline passed or a minute cannot be paid, offers it to other workers when its worker's lease
 * ran out. Work that fell due while no service ran (a restart) is caught up here exactly as it would have
 * happened.
 */
export async function settle(
  trx: Trx,
  row: SessionRow,
  now: Date,
  settings: SessionSettings,
  options: DueOptions,
): Promise<SessionRow> {
  let current = row;
  for (let step = nextDueStep(current, now, options); step; step = nextDueStep(current, now, options)) {
    switch (step.kind) {
      case "end":
        current = await endSession(trx, current, step.reason, step.at, now, settings, {
          vouched: step.vouches,
        });
        break;
      case "charge":
        current = await chargeNextMinute(trx, current, step.at, now, settings);
        break;
      case "worker_lost":
        current = await offerToOtherWorkers(trx, current, now, settings);
        break;
    }
  }
  return current;
}

/**
 * The session's owner stopped renewing its lease (or handed the session over): it is offered to the
 * other workers until the takeover deadline (takeover.ts does the offering); the owner stays recorded,
 * so that it can still reclaim the session if only its heartbeats were late.
 */
export function offerToOtherWorkers(
  trx: Trx,
  row: SessionRow,
  now: Date,
  settings: SessionSettings,
): Promise<SessionRow> {
  return updateSession(trx, row.id, {
    worker_deadline_at: null,
    takeover_deadline_at: new Date(now.getTime() + settings.PIPELINE_TAKEOVER_TIMEOUT_MS),
    takeover_attempt_at: null,
    updated_at: now,
  });
}
