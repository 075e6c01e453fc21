import { Code, ConnectError } from "@connectrpc/connect";
import { inputErrorOf, isDatabaseUnavailable } from "./db-errors.js";
import type { Logger } from "./log.js";

/**
 * What a service's caller gets for anything its handler threw, served over Connect or called in
 * process alike: a ConnectError as it was thrown; a database that cannot be reached as Unavailable
 * (temporary); a value the database refuses to store as the caller's invalid request (400); anything
 * else logged with its stack and answered as a bare internal error. Its log lines carry the call's
 * `requestId` when it has one.
 */
export function serviceError(err: unknown, log: Logger, procedure: string, requestId?: string): ConnectError {
  const call = requestId ? { procedure, request_id: requestId } : { procedure };
  if (err instanceof ConnectError) {
    if (err.code === Code.Internal || err.code === Code.Unknown) log.error("rpc failed", { ...call, err });
    return err;
  }
  if (isDatabaseUnavailable(err)) {
    log.warn("rpc failed: the database is unavailable", { ...call, err });
    return new ConnectError("database unavailable", Code.Unavailable);
  }
  const input = inputErrorOf(err);
  if (input) {
    log.warn("rpc refused a value the database cannot store", { ...call, reason: input.rawMessage });
    return input;
  }
  log.error("rpc failed unexpectedly", { ...call, err });
  return new ConnectError("internal error", Code.Internal);
}
