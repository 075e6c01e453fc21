import type { EndReasonName } from "@avatar/runtime";
import type { SessionRow } from "./schema.js";

/**
 * What a session's timers say is due at `now`, one step at a time, oldest first. The steps are applied
 * under the session's row lock by whoever holds it (the scheduler, or an operation settling the session
 * before it acts), so the result does not depend on when or where the work runs.
 */
export type DueStep =
  | { kind: "charge"; minuteIndex: number; at: Date }
  | { kind: "end"; reason: EndReasonName; at: Date };

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
>;

export function nextDueStep(row: TimerFields, now: Date): DueStep | undefined {
  const t = now.getTime();
  if (row.state === "CREATED") {
    const deadline = row.start_deadline_at;
    return deadline && deadline.getTime() <= t
      ? { kind: "end", reason: "ZOMBIE_SESSION_REAP", at: deadline }
      : undefined;
  }
  if (row.state !== "STARTED") return undefined;

  // The hard limit wins a tie with the idle deadline.
  const ends: { reason: EndReasonName; at: Date }[] = [];
  if (row.max_end_at) ends.push({ reason: "MAX_DURATION_REACHED", at: row.max_end_at });
  if (row.idle_deadline_at) ends.push({ reason: "IDLE_TIMEOUT", at: row.idle_deadline_at });
  // The pipeline worker stopped sending heartbeats that list the session: nobody serves it any more.
  if (row.worker_deadline_at) ends.push({ reason: "SERVER_ERROR", at: row.worker_deadline_at });
  const end = ends.reduce<{ reason: EndReasonName; at: Date } | undefined>(
    (first, e) => (first === undefined || e.at.getTime() < first.at.getTime() ? e : first),
    undefined,
  );

  // A minute is charged once it has begun (strictly before now, so that a session stopped at the very
  // instant a minute begins does not pay for it); one that begins when or after the session ends is not.
  const charge = row.next_charge_at;
  if (charge && charge.getTime() < t && (end === undefined || charge.getTime() < end.at.getTime())) {
    return { kind: "charge", minuteIndex: row.charged_minutes, at: charge };
  }
  if (end && end.at.getTime() <= t) return { kind: "end", ...end };
  return undefined;
}
