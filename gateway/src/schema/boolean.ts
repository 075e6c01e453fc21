import { failure, issue, type Loc, type ParseResult, success } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { type Mode, Schema } from "./schema.js";

const WORDS = new Map<string, boolean>([
  ...["0", "off", "f", "false", "n", "no"].map((word) => [word, false] as const),
  ...["1", "on", "t", "true", "y", "yes"].map((word) => [word, true] as const),
]);

const PARSING = "Input should be a valid boolean, unable to interpret input";

/** pydantic `bool`: also 0/1 and the words above in any case (no surrounding spaces). */
export class BooleanSchema extends Schema<boolean> {
  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<boolean> {
    if (typeof input === "boolean") return success(input);
    // pydantic-core reads integers of the i64 range only; larger ones are no boolean at all.
    if (
      !mode.strict &&
      typeof input === "number" &&
      Number.isInteger(input) &&
      input >= -(2 ** 63) &&
      input < 2 ** 63
    ) {
      if (input === 0 || input === 1) return success(input === 1);
      return failure(issue("bool_parsing", loc, PARSING, input));
    }
    if (!mode.strict && typeof input === "string") {
      const word = /^[A-Za-z01]+$/.test(input) ? WORDS.get(input.toLowerCase()) : undefined;
      return word === undefined ? failure(issue("bool_parsing", loc, PARSING, input)) : success(word);
    }
    return failure(issue("bool_type", loc, "Input should be a valid boolean", input));
  }

  protected kindLabel(): string {
    return "bool";
  }

  protected kindJsonSchema(): JsonSchema {
    return { type: "boolean" };
  }
}

export const boolean = (): BooleanSchema => new BooleanSchema();
