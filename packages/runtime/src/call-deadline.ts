import { Code, ConnectError } from "@connectrpc/connect";

/** The signal of a call that has no deadline and no caller that could go away. */
export const NEVER_ABORTED = new AbortController().signal;

/** setTimeout's limit: a longer deadline is as good as none for a call (the timer would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Aborts `controller` with DeadlineExceeded, as connect's deadlines do, after `timeoutMs` (at once when
 * it is not positive); answers the timer to clear when the call is done, if one was armed.
 */
export function armDeadline(
  controller: AbortController,
  timeoutMs: number | undefined,
): NodeJS.Timeout | undefined {
  if (timeoutMs === undefined) return undefined;
  const fire = () => {
    if (!controller.signal.aborted)
      controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  };
  if (timeoutMs <= 0) return void fire();
  return timeoutMs <= MAX_TIMER_MS ? setTimeout(fire, timeoutMs) : undefined;
}
