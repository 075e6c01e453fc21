import {
  type ErrorDetail,
  ErrorDetailSchema,
  type ValidationIssue,
  ValidationIssueSchema,
} from "@avatar/contracts/common";
import { create, fromJson, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Domain errors. Services throw these; the Connect code says what kind of failure it is and the attached
 * ErrorDetail carries the reason, the field and, for validation failures, the public 422 entries.
 * The gateway turns them into the contract's status and body.
 */

export interface IssueInput {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: JsonValue;
  ctx?: JsonObject;
}

interface DetailInput {
  reason?: string;
  field?: string;
}

function domainError(code: Code, message: string, detail: DetailInput & { issues?: ValidationIssue[] } = {}) {
  const payload = create(ErrorDetailSchema, {
    reason: detail.reason ?? "",
    field: detail.field ?? "",
    issues: detail.issues ?? [],
  });
  return new ConnectError(message, code, undefined, [{ desc: ErrorDetailSchema, value: payload }]);
}

/** 400: the request is well formed but breaks a rule. */
export const invalidRequest = (message: string, detail?: DetailInput) =>
  domainError(Code.InvalidArgument, message, detail);

/** 404: the resource does not exist, or belongs to another space. */
export const notFound = (message: string, detail?: DetailInput) =>
  domainError(Code.NotFound, message, detail);

/** 409: the resource is in a state that does not allow the operation. */
export const conflict = (message: string, detail?: DetailInput) =>
  domainError(Code.FailedPrecondition, message, detail);

/** 401 */
export const unauthenticated = (message = "Not authenticated", detail?: DetailInput) =>
  domainError(Code.Unauthenticated, message, detail);

/** 403 */
export const forbidden = (message: string, detail?: DetailInput) =>
  domainError(Code.PermissionDenied, message, detail);

/** 402: the space cannot pay. */
export const insufficientCredits = (message = "Insufficient credits") =>
  domainError(Code.ResourceExhausted, message, { reason: "INSUFFICIENT_CREDITS" });

/** A limit an owner set is reached (ResourceExhausted, told apart from credits by its reason). */
export const limitReached = (message: string, reason: string) =>
  domainError(Code.ResourceExhausted, message, { reason });

/** 422: validation entries in the public shape. */
export function validationFailed(issues: IssueInput[]): ConnectError {
  return domainError(Code.InvalidArgument, issues[0]?.msg ?? "Validation failed", {
    reason: "VALIDATION_FAILED",
    issues: issues.map(toIssueMessage),
  });
}

function toIssueMessage(issue: IssueInput): ValidationIssue {
  return create(ValidationIssueSchema, {
    loc: issue.loc.map((p) =>
      typeof p === "number"
        ? { part: { case: "index" as const, value: p } }
        : { part: { case: "key" as const, value: p } },
    ),
    msg: issue.msg,
    type: issue.type,
    // google.protobuf.Value has no "absent" form: an absent input travels as JSON null.
    input: fromJson(ValueSchema, issue.input ?? null),
    ctx: issue.ctx,
  });
}

/** The issue in its public JSON form (ctx only when present, as pydantic does). */
export function issueToJson(issue: ValidationIssue): IssueInput {
  const out: IssueInput = {
    loc: issue.loc.map((p) => (p.part.case === "index" ? p.part.value : (p.part.value ?? ""))),
    msg: issue.msg,
    type: issue.type,
    input: issue.input ? toJson(ValueSchema, issue.input) : null,
  };
  if (issue.ctx) out.ctx = issue.ctx;
  return out;
}

export function errorDetailOf(err: ConnectError): ErrorDetail | undefined {
  return err.findDetails(ErrorDetailSchema)[0];
}

/**
 * 503: a dependency this operation needs cannot be reached now; trying again later may work. Unlike an
 * unexpected failure, its message is written for API users and the gateway shows it.
 */
export const unavailable = (message: string, detail?: DetailInput) =>
  domainError(Code.Unavailable, message, detail);
