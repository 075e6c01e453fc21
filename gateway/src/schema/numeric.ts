import { failure, issue, type Loc, type ParseResult, success, type ValidationIssue } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { boundText } from "./py-format.js";
import { type Mode, Schema } from "./schema.js";

export interface NumberBounds {
  ge?: number;
  gt?: number;
  le?: number;
  lt?: number;
}

type Parsed = { value: number } | { issue: ValidationIssue };

const INT_TYPE = "Input should be a valid integer";
const FLOAT_TYPE = "Input should be a valid number";

/**
 * pydantic-core's treatment of underscores in numeric strings: none at either end, never two in a row,
 * otherwise they are dropped (so "1_000" and even "1_.5" pass).
 */
function stripUnderscores(text: string): string | undefined {
  if (!text.includes("_")) return text;
  if (text.startsWith("_") || text.endsWith("_") || text.includes("__")) return undefined;
  return text.replace(/_/g, "");
}

function notFinite(loc: Loc, input: unknown): { issue: ValidationIssue } {
  return { issue: issue("finite_number", loc, "Input should be a finite number", input) };
}

function readInt(input: unknown, loc: Loc, mode: Mode): Parsed {
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return notFinite(loc, input);
    if (Number.isInteger(input)) return { value: input + 0 };
    const msg = mode.strict
      ? INT_TYPE
      : "Input should be a valid integer, got a number with a fractional part";
    return { issue: issue(mode.strict ? "int_type" : "int_from_float", loc, msg, input) };
  }
  if (!mode.strict && typeof input === "boolean") return { value: input ? 1 : 0 };
  if (!mode.strict && typeof input === "string") {
    const text = input.trim();
    if (text.length > 4300) {
      const msg = "Unable to parse input string as an integer, exceeded maximum size";
      return { issue: issue("int_parsing_size", loc, msg, input) };
    }
    // An integer, or one written with a zero fraction ("12.00"); "12." and "12.5" are refused.
    const digits = stripUnderscores(text);
    if (digits !== undefined && /^[+-]?\d+(\.0+)?$/.test(digits)) return { value: Number(digits) + 0 };
    const msg = "Input should be a valid integer, unable to parse string as an integer";
    return { issue: issue("int_parsing", loc, msg, input) };
  }
  return { issue: issue("int_type", loc, INT_TYPE, input) };
}

const SPECIAL_FLOATS = new Map([
  ["inf", Number.POSITIVE_INFINITY],
  ["infinity", Number.POSITIVE_INFINITY],
  ["nan", Number.NaN],
]);

/** Non-finite values are read (bounds are checked against them as pydantic does) and refused later. */
function readFloat(input: unknown, loc: Loc, mode: Mode): Parsed {
  if (typeof input === "number") return { value: input };
  if (!mode.strict && typeof input === "boolean") return { value: input ? 1 : 0 };
  if (!mode.strict && typeof input === "string") {
    const digits = stripUnderscores(input.trim());
    if (digits !== undefined && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(digits))
      return { value: Number(digits) };
    const special = /^([+-]?)([a-zA-Z]+)$/.exec(input.trim());
    const word = special ? SPECIAL_FLOATS.get((special[2] ?? "").toLowerCase()) : undefined;
    if (special && word !== undefined) return { value: special[1] === "-" ? -word : word };
    const msg = "Input should be a valid number, unable to parse string as a number";
    return { issue: issue("float_parsing", loc, msg, input) };
  }
  return { issue: issue("float_type", loc, FLOAT_TYPE, input) };
}

/** pydantic-core checks le, lt, ge, gt in this order and reports the first one broken. */
function boundIssue(
  value: number,
  bounds: NumberBounds,
  loc: Loc,
  input: unknown,
): ValidationIssue | undefined {
  const { le, lt, ge, gt } = bounds;
  if (le !== undefined && !(value <= le)) {
    return issue("less_than_equal", loc, `Input should be less than or equal to ${boundText(le)}`, input, {
      le,
    });
  }
  if (lt !== undefined && !(value < lt)) {
    return issue("less_than", loc, `Input should be less than ${boundText(lt)}`, input, { lt });
  }
  if (ge !== undefined && !(value >= ge)) {
    const msg = `Input should be greater than or equal to ${boundText(ge)}`;
    return issue("greater_than_equal", loc, msg, input, { ge });
  }
  if (gt !== undefined && !(value > gt)) {
    return issue("greater_than", loc, `Input should be greater than ${boundText(gt)}`, input, { gt });
  }
  return undefined;
}

function boundsJsonSchema({ ge, gt, le, lt }: NumberBounds): JsonSchema {
  return {
    ...(ge === undefined ? {} : { minimum: ge }),
    ...(gt === undefined ? {} : { exclusiveMinimum: gt }),
    ...(le === undefined ? {} : { maximum: le }),
    ...(lt === undefined ? {} : { exclusiveMaximum: lt }),
  };
}

const hasBounds = (bounds: NumberBounds) => Object.values(bounds).some((bound) => bound !== undefined);

abstract class NumericSchema extends Schema<number> {
  constructor(readonly bounds: NumberBounds = {}) {
    super();
  }

  protected abstract read(input: unknown, loc: Loc, mode: Mode): Parsed;

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<number> {
    const parsed = this.read(input, loc, mode);
    if ("issue" in parsed) return failure(parsed.issue);
    const problem = boundIssue(parsed.value, this.bounds, loc, input);
    if (problem) return failure(problem);
    // pydantic would accept inf and nan in a float; this service refuses what JSON cannot carry.
    return Number.isFinite(parsed.value) ? success(parsed.value) : failure(notFinite(loc, input).issue);
  }
}

/** pydantic `int`: also "12", " 12 ", "12.0", 12.0 and booleans (as 0/1). */
export class IntSchema extends NumericSchema {
  protected read(input: unknown, loc: Loc, mode: Mode): Parsed {
    return readInt(input, loc, mode);
  }

  protected kindLabel(): string {
    return hasBounds(this.bounds) ? "constrained-int" : "int";
  }

  protected kindJsonSchema(): JsonSchema {
    return { type: "integer", ...boundsJsonSchema(this.bounds) };
  }
}

/** pydantic `float`: also numeric strings and booleans; only finite values (unlike pydantic). */
export class NumberSchema extends NumericSchema {
  protected read(input: unknown, loc: Loc, mode: Mode): Parsed {
    return readFloat(input, loc, mode);
  }

  protected kindLabel(): string {
    return hasBounds(this.bounds) ? "constrained-float" : "float";
  }

  protected kindJsonSchema(): JsonSchema {
    return { type: "number", ...boundsJsonSchema(this.bounds) };
  }
}

export const int = (bounds?: NumberBounds): IntSchema => new IntSchema(bounds);
export const number = (bounds?: NumberBounds): NumberSchema => new NumberSchema(bounds);
