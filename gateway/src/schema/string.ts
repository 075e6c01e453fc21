import { failure, issue, type Loc, type ParseResult, success, type ValidationIssue } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { charLength, plural } from "./py-format.js";
import { Schema } from "./schema.js";

export interface StringOptions {
  /** In characters (code points), as Python counts. */
  minLength?: number;
  maxLength?: number;
}

/** Length bounds of a str, shared with dictionary keys. */
export function lengthIssue(text: string, options: StringOptions, loc: Loc): ValidationIssue | undefined {
  const { minLength, maxLength } = options;
  if (minLength === undefined && maxLength === undefined) return undefined;
  const length = charLength(text);
  if (minLength !== undefined && length < minLength) {
    const msg = `String should have at least ${minLength} ${plural(minLength, "character")}`;
    return issue("string_too_short", loc, msg, text, { min_length: minLength });
  }
  if (maxLength !== undefined && length > maxLength) {
    const msg = `String should have at most ${maxLength} ${plural(maxLength, "character")}`;
    return issue("string_too_long", loc, msg, text, { max_length: maxLength });
  }
  return undefined;
}

/** pydantic `str`: numbers and booleans are not turned into strings. */
export class StringSchema extends Schema<string> {
  constructor(readonly options: StringOptions = {}) {
    super();
  }

  protected check(input: unknown, loc: Loc): ParseResult<string> {
    if (typeof input !== "string")
      return failure(issue("string_type", loc, "Input should be a valid string", input));
    const problem = lengthIssue(input, this.options, loc);
    return problem ? failure(problem) : success(input);
  }

  protected kindLabel(): string {
    const { minLength, maxLength } = this.options;
    return minLength === undefined && maxLength === undefined ? "str" : "constrained-str";
  }

  protected kindJsonSchema(): JsonSchema {
    const { minLength, maxLength } = this.options;
    return {
      type: "string",
      ...(minLength === undefined ? {} : { minLength }),
      ...(maxLength === undefined ? {} : { maxLength }),
    };
  }
}

export const string = (options?: StringOptions): StringSchema => new StringSchema(options);
