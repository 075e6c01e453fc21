import { type CallError, CallErrorSchema, ErrorDetailSchema } from "@avatar/contracts/common";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorDetailOf } from "./errors.js";
import type { Logger } from "./log.js";
import { serviceError } from "./service-errors.js";

/**
 * One item of a batch call fails on its own: its error travels in the answer as a CallError, and the
 * caller gets back the ConnectError a call of its own would have thrown (code, message, detail).
 */

/** What a batch handler answers for an item that threw (logged and masked as serviceError does). */
export function callErrorOf(err: unknown, log: Logger, procedure: string, requestId?: string): CallError {
  const e = serviceError(err, log, procedure, requestId);
  const detail = errorDetailOf(e);
  return create(CallErrorSchema, { code: e.code, message: e.rawMessage, ...(detail ? { detail } : {}) });
}

/** The ConnectError an item's CallError stands for. */
export function connectErrorOf(e: CallError): ConnectError {
  const code = e.code in Code && e.code !== 0 ? (e.code as Code) : Code.Unknown;
  const details = e.detail ? [{ desc: ErrorDetailSchema, value: e.detail }] : [];
  return new ConnectError(e.message, code, undefined, details);
}
