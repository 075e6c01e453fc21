/**
 * When a failed delivery is tried again: after 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, then
 * every 8 h, until the retry period (a day by default) after the event has passed; the last attempt
 * falls on that deadline. About eleven attempts in a day.
 */
const SCHEDULE_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
];

/** The next attempt after `attempts` failed ones, or undefined when the delivery has run out of time. */
export function nextAttemptAt(
  attempts: number,
  now: Date,
  createdAt: Date,
  retryForMs: number,
): Date | undefined {
  const deadline = createdAt.getTime() + retryForMs;
  if (now.getTime() >= deadline) return undefined;
  const delay = SCHEDULE_MS[Math.min(Math.max(attempts, 1), SCHEDULE_MS.length) - 1] ?? 28_800_000;
  return new Date(Math.min(now.getTime() + delay, deadline));
}
