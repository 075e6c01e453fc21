import { failure, issue, type Loc, type ParseResult, success } from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { joinOr, pyRepr } from "./py-format.js";
import { Schema } from "./schema.js";

export type Primitive = string | number | boolean;

function jsonType(values: readonly Primitive[]): JsonSchema {
  const kinds = new Set(
    values.map((value) => (typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value)),
  );
  const [kind] = kinds;
  return kinds.size === 1 && kind !== undefined ? { type: kind } : {};
}

abstract class ChoiceSchema<V extends Primitive> extends Schema<V> {
  protected abstract readonly errorType: string;

  constructor(readonly values: readonly V[]) {
    super();
    if (values.length === 0) throw new Error("a choice needs at least one value");
  }

  /** "'a', 'b' or 'c'", as in the message and ctx of pydantic. */
  get expected(): string {
    return joinOr(this.values.map(pyRepr));
  }

  protected check(input: unknown, loc: Loc): ParseResult<V> {
    const found = this.values.find((value) => value === input);
    if (found !== undefined) return success(found);
    const { expected } = this;
    return failure(issue(this.errorType, loc, `Input should be ${expected}`, input, { expected }));
  }
}

/** pydantic `Literal[...]`: one of the given values exactly; error `literal_error`. */
export class LiteralSchema<V extends Primitive> extends ChoiceSchema<V> {
  protected readonly errorType = "literal_error";

  protected kindLabel(): string {
    return `literal[${this.values.map(pyRepr).join(",")}]`;
  }

  protected kindJsonSchema(): JsonSchema {
    const [only] = this.values;
    if (this.values.length === 1) return { const: only, ...jsonType(this.values) };
    return { enum: [...this.values], ...jsonType(this.values) };
  }
}

/**
 * A Python Enum field: error `enum`. With a name it becomes a component of the JSON Schema, as pydantic
 * renders an Enum class; without one it stays inline.
 */
export class EnumSchema<V extends string | number> extends ChoiceSchema<V> {
  protected readonly errorType = "enum";

  constructor(
    values: readonly V[],
    readonly name?: string,
  ) {
    super(values);
  }

  protected kindLabel(): string {
    const kind = this.values.every((value) => typeof value === "string") ? "str-enum" : "enum";
    return `${kind}[${this.name ?? "Enum"}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    const schema = { enum: [...this.values], ...jsonType(this.values) };
    const { name } = this;
    return name === undefined ? schema : ctx.ref(name, () => ({ ...schema, title: name }));
  }
}

export const literal = <const V extends readonly Primitive[]>(...values: V): LiteralSchema<V[number]> =>
  new LiteralSchema(values);

export const enumOf = <const V extends readonly (string | number)[]>(
  values: V,
  options: { name?: string } = {},
): EnumSchema<V[number]> => new EnumSchema(values, options.name);
