import { errorDetailOf, type IssueInput, issueToJson } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/** An error the gateway answers with a status and the envelope (or, for 422, the validation body). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues?: IssueInput[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const notAuthenticated = () => new HttpError(401, "Not authenticated");
export const wrongCredential = (message: string) => new HttpError(403, message);

/** How each Connect code of a service error surfaces on the public API. */
const statusOfCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  [Code.Unauthenticated]: 401,
  [Code.ResourceExhausted]: 402,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.FailedPrecondition]: 409,
  [Code.Aborted]: 409,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 503,
};

/** Turns anything a handler threw into an HttpError; unexpected errors become a 500 with no detail. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ConnectError) {
    const detail = errorDetailOf(err);
    if (err.code === Code.InvalidArgument && detail && detail.issues.length > 0) {
      return new HttpError(422, err.rawMessage, detail.issues.map(issueToJson));
    }
    const status = statusOfCode[err.code] ?? 500;
    // A service's own 503 (a domain error, with its detail) says what is unavailable; other 5xx stay vague.
    const shown = status < 500 || (status === 503 && detail) ? err.rawMessage : publicServerMessage(status);
    return new HttpError(status, shown);
  }
  return new HttpError(500, "Internal server error");
}

function publicServerMessage(status: number): string {
  if (status === 503) return "Service temporarily unavailable";
  if (status === 501) return "Not implemented";
  return "Internal server error";
}
