/**
 * Query and path parameters, validated one by one as FastAPI does: every value arrives as a string and
 * is coerced in lax mode; issues sit at ["query", name] or ["path", name]; a missing one has input null.
 */
import { ArraySchema } from "./array.js";
import type { Loc, ParseResult } from "./issues.js";
import { type Components, type JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { type ObjectOutput, type Shape, validateFields } from "./object.js";
import { titleFromName } from "./py-format.js";
import { DefaultSchema, LAX, NullableSchema, OptionalSchema, type Schema } from "./schema.js";

export type ParamValues =
  | URLSearchParams
  | { readonly [name: string]: string | readonly string[] | undefined };

export interface OpenApiParameter {
  name: string;
  in: "query" | "path";
  required: boolean;
  schema: JsonSchema;
  description?: string;
}

function takesList(field: Schema<unknown>): boolean {
  let current = field;
  while (
    current instanceof OptionalSchema ||
    current instanceof DefaultSchema ||
    current instanceof NullableSchema
  ) {
    current = current.inner;
  }
  return current instanceof ArraySchema;
}

export class ParamsSchema<S extends Shape> {
  /** Type level only, for `Infer`. */
  declare readonly _output: ObjectOutput<S>;

  constructor(
    readonly source: "query" | "path",
    readonly shape: S,
  ) {}

  /** A repeated name gives a list field all its values and any other field the last one. */
  parse(params: ParamValues): ParseResult<ObjectOutput<S>> {
    const read = (name: string): unknown => {
      const raw = params instanceof URLSearchParams ? params.getAll(name) : params[name];
      const values = raw === undefined ? [] : typeof raw === "string" ? [raw] : [...raw];
      if (values.length === 0) return undefined;
      const field = this.shape[name];
      return field !== undefined && takesList(field) ? values : values[values.length - 1];
    };
    const loc = (name: string): Loc => [this.source, name];
    return validateFields(this.shape, read, loc, null, LAX);
  }

  /** The OpenAPI `parameters` entries; named schemas go to `components`. */
  openApiParameters(components: Components = {}): OpenApiParameter[] {
    const ctx = new JsonSchemaContext(components);
    return Object.entries(this.shape).map(([name, field]) => {
      const required =
        this.source === "path" || !(field instanceof OptionalSchema || field instanceof DefaultSchema);
      const schema = { ...ctx.of(field), title: titleFromName(name) };
      const parameter: OpenApiParameter = { name, in: this.source, required, schema };
      if (field.description !== undefined) parameter.description = field.description;
      return parameter;
    });
  }
}

export const query = <S extends Shape>(shape: S): ParamsSchema<S> => new ParamsSchema("query", shape);
export const path = <S extends Shape>(shape: S): ParamsSchema<S> => new ParamsSchema("path", shape);
