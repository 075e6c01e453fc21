/**
 * Validation issues: one entry of the 422 body, with pydantic v2's `type`, `msg` and `ctx` vocabulary.
 * Constructors for the entries shared by several schema kinds live here; the others stay with their kind.
 */

export type Loc = readonly (string | number)[];

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

export function issue(
  type: string,
  loc: Loc,
  msg: string,
  input: unknown,
  ctx?: Record<string, unknown>,
): ValidationIssue {
  const entry: ValidationIssue = { type, loc: [...loc], msg, input };
  if (ctx !== undefined) entry.ctx = ctx;
  return entry;
}

export function failure(...issues: ValidationIssue[]): { ok: false; issues: ValidationIssue[] } {
  return { ok: false, issues };
}

export function success<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** An absent required field; pydantic reports the enclosing object (or null for a parameter) as input. */
export function missing(loc: Loc, input: unknown): ValidationIssue {
  return issue("missing", loc, "Field required", input);
}

/** A failed refinement, as a pydantic validator raising ValueError(message). */
export function valueError(loc: Loc, input: unknown, message: string): ValidationIssue {
  return issue("value_error", loc, `Value error, ${message}`, input, { error: message });
}

/** The non-dict answer of a model: FastAPI validates with from_attributes=True, hence this type. */
export function modelAttributesType(loc: Loc, input: unknown): ValidationIssue {
  return issue(
    "model_attributes_type",
    loc,
    "Input should be a valid dictionary or object to extract fields from",
    input,
  );
}

/** The body of a 422 response, entries keyed in FastAPI's order: type, loc, msg, input, ctx. */
export function validationErrorBody(issues: readonly ValidationIssue[]): { detail: ValidationIssue[] } {
  return {
    detail: issues.map(({ type, loc, msg, input, ctx }) =>
      ctx === undefined ? { type, loc: [...loc], msg, input } : { type, loc: [...loc], msg, input, ctx },
    ),
  };
}
