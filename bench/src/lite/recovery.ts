/** How a backend came back after a pause: the limit its seconds were held to, and from when they kept to it. */
export interface Recovery {
  /** The larger of the target's bound and twice the median second before the pause, ms. */
  limitMs: number;
  /** The first second from which every later second's p99 is within the limit; undefined: not by the end. */
  fromSecond: number | undefined;
}

/**
 * After a pause from second `pausedAt` of the window: from which second on every second's p99 (bySecond,
 * NaN for a second without chunks) is back within the limit. The limit is the target's bound, or twice
 * the median second before the pause when that is larger: on a host whose tail is over the bound at the
 * best of times, "back to how it was" is what the pause is measured against.
 */
export function recovery(bySecond: readonly number[], pausedAt: number, boundMs: number): Recovery {
  const before = bySecond
    .slice(0, Math.floor(pausedAt))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const median = before.length > 0 ? (before[Math.floor((before.length - 1) / 2)] ?? 0) : 0;
  const limitMs = Math.max(boundMs, 2 * median);
  let from = bySecond.length;
  while (from > 0 && !((bySecond[from - 1] ?? Number.NaN) > limitMs)) from--;
  if (from === bySecond.length) return { limitMs, fromSecond: undefined };
  return { limitMs, fromSecond: Math.max(from, Math.ceil(pausedAt)) };
}
