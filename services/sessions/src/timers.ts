import type { EndReasonName } from "@avatar/runtime";
import type { SessionRow } from "./schema.js";

/**
 * What a session's timers say is due at `now`, one step at a time, oldest first. The steps are applied
 * under the session's row lock by whoever holds it (the scheduler, or an operation settling the session
 * before it acts), so the result does not depend on when or where the work runs.
 */
export type DueStep =
  | { kind: "charge"; minuteIndex: number; at: Date }
  /** `vouches`: the session was served up to `at`, so the minutes that began before it are charged. */
  | { kind: "end"; reason: EndReasonName; at: Date; vouches: boolean }
  /** The owner's lease ran out: offer the session to another worker (it does not end yet). */
  | { kind: "worker_lost"; at: Date };

/** The fields of a session row its timers are computed from. */
export type TimerFields = Pick<
  SessionRow,
  | "state"
  | "start_deadline_at"
  | "idle_deadline_at"
  | "max_end_at"
  | "next_charge_at"
  | "charged_minutes"
  | "worker_deadline_at"
  | "worker_seen_at"
  | "takeover_deadline_at"
>;

export interface DueOptions {
  /**
   * Whether deadlines that judge the session on reports it should have received (idle timeout, the
   * worker's lease, the takeover deadline) may fire now. False while this service could not receive
   * those reports (its bus or database was down, or it has just come back): see judgment.ts.
   */
  judge: boolean;
}

interface End {
  reason: EndReasonName;
  /** When the session ends (ended_at): billing stops here. */
  at: Date;
  /** When the end fires; later than `at` for a lost worker (the session was offered to others first). */
  due: Date;
  /** The session was served up to `at` (every end but the loss of its worker). */
  vouches: boolean;
  /** It judges the session on reports (see DueOptions.judge). */
  judged: boolean;
}

export function nextDueStep(
  row: TimerFields,
  now: Date,
  options: DueOptions = { judge: true },
): DueStep | undefined {
  const t = now.getTime();
  if (row.state === "CREATED") {
    const deadline = row.start_deadline_at;
    return deadline && deadline.getTime() <= t
      ? { kind: "end", reason: "ZOMBIE_SESSION_REAP", at: deadline, vouches: false }
      : undefined;
  }
  if (row.state !== "STARTED") return undefined;

  // The hard limit wins a tie with the idle deadline.
  const ends: End[] = [];
  if (row.max_end_at) {
    const at = row.max_end_at;
    ends.push({ reason: "MAX_DURATION_REACHED", at, due: at, vouches: true, judged: false });
  }
  if (row.idle_deadline_at) {
    const at = row.idle_deadline_at;
    ends.push({ reason: "IDLE_TIMEOUT", at, due: at, vouches: true, judged: true });
  }
  // Lost and offered to the other workers in vain: it ends when it was last served.
  if (row.takeover_deadline_at) {
    const due = row.takeover_deadline_at;
    const at = earlier(row.worker_seen_at ?? due, due);
    ends.push({ reason: "SERVER_ERROR", at, due, vouches: false, judged: true });
  }
  // An end that may not be judged yet still bounds the charges: it may turn out to be the end.
  const firstEnd = earliest(ends);
  const dueEnd = earliest(ends.filter((e) => e.due.getTime() <= t && (options.judge || !e.judged)));

  // A minute is charged once it has begun (strictly before now, so that a session stopped at the very
  // instant a minute begins does not pay for it); one that begins when or after the session ends is not.
  // While a worker runs the session, a minute is charged once the worker has been heard serving it, or
  // when an end other than the worker's loss vouches for the time before it.
  const charge = row.next_charge_at;
  if (
    charge &&
    charge.getTime() < t &&
    (firstEnd === undefined || charge.getTime() < firstEnd.at.getTime()) &&
    (servedAfter(row, charge) || dueEnd?.vouches === true)
  ) {
    return { kind: "charge", minuteIndex: row.charged_minutes, at: charge };
  }
  if (dueEnd) return { kind: "end", reason: dueEnd.reason, at: dueEnd.at, vouches: dueEnd.vouches };
  const lease = row.worker_deadline_at;
  if (options.judge && lease && !row.takeover_deadline_at && lease.getTime() <= t) {
    return { kind: "worker_lost", at: lease };
  }
  return undefined;
}

/** Whether the session's worker (if it has one) was heard serving it after `moment`. */
export function servedAfter(row: Pick<TimerFields, "worker_seen_at">, moment: Date): boolean {
  return row.worker_seen_at === null || row.worker_seen_at.getTime() > moment.getTime();
}

function earliest(ends: End[]): End | undefined {
  return ends.reduce<End | undefined>(
    (first, e) => (first === undefined || e.at.getTime() < first.at.getTime() ? e : first),
    undefined,
  );
}

const earlier = (a: Date, b: Date): Date => (a.getTime() <= b.getTime() ? a : b);
