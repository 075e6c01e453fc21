import { errorDetailOf, type IssueInput, issueToJson } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";

/** An error the gateway answers with a status and the envelope (or, for 422, the validation body). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues?: IssueInput[],
    readonly headers: Record<string, string> = {},
    /** More fields of the error envelope (beside code, data and message). */
    readonly fields?: Record<string, unknown>,
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
  // No service answers Aborted: the Connect client reports a connection cut mid-call (a service that
  // died or restarted) with it. Temporary, like Unavailable.
  [Code.Aborted]: 503,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 503,
};

/** A 503 tells the client when to try again (a service or its database is briefly down). */
const RETRY_AFTER_SECONDS = 2;

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
    if (status === 503) {
      const unavailable = serviceUnavailable();
      return detail ? new HttpError(503, err.rawMessage, undefined, unavailable.headers) : unavailable;
    }
    return new HttpError(status, status >= 500 ? publicServerMessage(status) : err.rawMessage);
  }
  return new HttpError(500, "Internal server error");
}

/** 503 in the envelope (code 5030) with Retry-After. */
export const serviceUnavailable = (
  message = "Service temporarily unavailable",
  retryAfterSeconds = RETRY_AFTER_SECONDS,
) => new HttpError(503, message, undefined, { "Retry-After": String(retryAfterSeconds) });

/** 429 in the envelope with the limiter's headers (Retry-After, X-RateLimit-*). */
export const rateLimited = (headers: Record<string, string>) =>
  new HttpError(429, "Rate limit exceeded", undefined, headers);

function publicServerMessage(status: number): string {
  if (status === 501) return "Not implemented";
  return "Internal server error";
}
