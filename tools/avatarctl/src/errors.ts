import { errorDetailOf } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/** A bad command line or input file: reported in one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * A failure after part of the command's work was done (the space exists but the grant failed, a grant
 * whose outcome is unknown): the hint tells the operator how to finish it without doing anything twice.
 */
export class FailedWithHint extends Error {
  override readonly name = "FailedWithHint";
  constructor(
    readonly failure: unknown,
    readonly hint: string,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}

/** "NotFound" -> "not_found", the spelling Connect uses on the wire. */
function codeName(code: Code): string {
  return (Code[code] ?? "unknown").replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase();
}

/** One line for a service error: the server's own message, its code and the field it names, if any. */
export function describeConnectError(err: ConnectError): string {
  const field = errorDetailOf(err)?.field;
  const message = err.rawMessage.split("\n")[0] || "request failed";
  return `${message} (${codeName(err.code)}${field ? `, field ${field}` : ""})`;
}

export interface ErrorReport {
  exitCode: 1 | 2;
  lines: string[];
}

/** How an error ends the command; only errors nobody expected keep their stack trace. */
export function reportError(err: unknown): ErrorReport {
  if (err instanceof UsageError) return { exitCode: 2, lines: [err.message] };
  if (err instanceof FailedWithHint) {
    const first = reportError(err.failure);
    return { exitCode: 1, lines: [...first.lines, `hint: ${err.hint}`] };
  }
  if (err instanceof ConnectError) return { exitCode: 1, lines: [describeConnectError(err)] };
  const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { exitCode: 1, lines: [`unexpected error: ${text}`] };
}
