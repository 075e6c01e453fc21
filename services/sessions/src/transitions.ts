import { SessionEndedSchema } from "@avatar/contracts/sessions";
import type { EndReasonName } from "@avatar/runtime";
import { enqueueEvent, type Topic, topics } from "@avatar/runtime";
import { create, type Message } from "@bufbuild/protobuf";
import type { Transaction, Updateable } from "kysely";
import { chargeMinute, releaseEscrow } from "./ledger.js";
import { sessionToProto } from "./mapping.js";
import { countTransition } from "./metrics.js";
import { updateSession } from "./repository.js";
import type { SessionRow, SessionsDatabase, SessionTable } from "./schema.js";
import { appendSessionEvents } from "./session-events.js";
import type { SessionSettings } from "./settings.js";
import { nextDueStep } from "./timers.js";

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
} satisfies Updateable<SessionTable>;

/** Records a lifecycle notice among the session's events and puts its bus event in the outbox. */
export async function announce<T extends Message>(
  trx: Trx,
  row: SessionRow,
  notice: { type: string; payload: Record<string, unknown> },
  event: { topic: Topic<T>; value: T; msgId: string },
  now: Date,
): Promise<void> {
  await appendSessionEvents(trx, row.id, [{ type: notice.type, payload: notice.payload, createdAt: now }]);
  await enqueueEvent(trx, event.topic, event.value, event.msgId, now);
  countTransition(row, notice.type);
}

/** Ends a session that has not ended: at `at` (the moment its timer fired, or now), for `reason`. */
export async function endSession(
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
  const ended = await updateSession(trx, row.id, {
    ...noTimers,
    state: "ENDED",
    end_reason: reason,
    ended_at: at,
    updated_at: now,
    escrow_amount: 0,
  });
  await announce(
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
  return ended;
}

/**
 * Applies every timer step due at `now` in time order: charges the minutes that began, ends the session
 * when a deadline passed or a minute cannot be paid. Work that fell due while no service ran (a restart)
 * is caught up here exactly as it would have happened.
 */
export async function settle(
  trx: Trx,
  row: SessionRow,
  now: Date,
  settings: SessionSettings,
): Promise<SessionRow> {
  let current = row;
  for (let step = nextDueStep(current, now); step; step = nextDueStep(current, now)) {
    if (step.kind === "end") {
      current = await endSession(trx, current, step.reason, step.at, now);
      continue;
    }
    const result = await chargeMinute(trx, {
      spaceId: current.space_id,
      sessionId: current.id,
      amount: current.credit_rate,
      minuteIndex: step.minuteIndex,
      at: step.at,
    });
    if (result === "insufficient") {
      current = await endSession(trx, current, "NO_CREDITS", step.at, now);
      continue;
    }
    current = await updateSession(trx, current.id, {
      charged_minutes: step.minuteIndex + 1,
      next_charge_at: new Date(step.at.getTime() + settings.SESSION_MINUTE_MS),
      credits_consumed: current.credits_consumed + (result === "charged" ? current.credit_rate : 0),
      updated_at: now,
    });
  }
  return current;
}
