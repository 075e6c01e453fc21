import {
  failure,
  type Loc,
  missing,
  modelAttributesType,
  type ParseResult,
  success,
  type ValidationIssue,
} from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { titleFromName } from "./py-format.js";
import { DefaultSchema, type Infer, type Mode, OptionalSchema, Schema } from "./schema.js";

export type Shape = { readonly [key: string]: Schema<unknown> };

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { _optional: true } ? K : never;
}[keyof S];

/** Parsed object: keys with a default are always present, `.optional()` keys may be absent. */
export type ObjectOutput<S extends Shape> = Simplify<
  { -readonly [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & {
    -readonly [K in OptionalKeys<S>]?: Infer<S[K]>;
  }
>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Assignment that also works for a key named "__proto__" (a legal JSON key). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

/** Each shape's fields in order, listed once (a shape is never changed once made). */
const fieldLists = new WeakMap<Shape, [string, Schema<unknown>][]>();

function fieldsOf(shape: Shape): [string, Schema<unknown>][] {
  let fields = fieldLists.get(shape);
  if (!fields) {
    fields = Object.entries(shape);
    fieldLists.set(shape, fields);
  }
  return fields;
}

/**
 * Validates each field of `shape` from `read(key)`, collecting every issue in field order. Shared by
 * body models and by query/path parameter sets.
 */
export function validateFields<S extends Shape>(
  shape: S,
  read: (key: string) => unknown,
  fieldLoc: (key: string) => Loc,
  parentInput: unknown,
  mode: Mode,
): ParseResult<ObjectOutput<S>> {
  const out: Record<string, unknown> = {};
  const issues: ValidationIssue[] = [];
  for (const [key, field] of fieldsOf(shape)) {
    const raw = read(key);
    if (raw === undefined) {
      // The loc is made only for an issue: most absent fields take their default.
      if (field instanceof DefaultSchema) setOwn(out, key, field.produceDefault());
      else if (!(field instanceof OptionalSchema)) issues.push(missing(fieldLoc(key), parentInput));
      continue;
    }
    const result = field.validate(raw, fieldLoc(key), mode);
    if (result.ok) setOwn(out, key, result.value);
    else issues.push(...result.issues);
  }
  return issues.length > 0 ? failure(...issues) : success(out as ObjectOutput<S>);
}

export interface ObjectOptions {
  /** The model's docstring: `description` of the component. */
  description?: string;
}

/** A pydantic model: named, unknown keys ignored and dropped, all field issues reported. */
export class ObjectSchema<S extends Shape> extends Schema<ObjectOutput<S>> {
  constructor(
    readonly name: string,
    readonly shape: S,
    readonly options: ObjectOptions = {},
  ) {
    super();
  }

  /** A new model with the fields of this one followed by `more` (a field of `more` replaces one here). */
  extend<M extends Shape>(
    name: string,
    more: M,
    options: ObjectOptions = {},
  ): ObjectSchema<Omit<S, keyof M> & M> {
    return new ObjectSchema(name, { ...this.shape, ...more } as Omit<S, keyof M> & M, options);
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<ObjectOutput<S>> {
    if (!isPlainObject(input)) return failure(modelAttributesType(loc, input));
    return validateFields(
      this.shape,
      (key) => (Object.hasOwn(input, key) ? input[key] : undefined),
      (key) => [...loc, key],
      input,
      mode,
    );
  }

  protected kindLabel(): string {
    return this.name;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return ctx.ref(this.name, () => {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(this.shape)) {
        properties[key] = propertySchema(key, field, ctx);
        if (!(field instanceof DefaultSchema) && !(field instanceof OptionalSchema)) required.push(key);
      }
      const { description } = this.options;
      return {
        type: "object",
        title: this.name,
        ...(description === undefined ? {} : { description }),
        properties,
        ...(required.length > 0 ? { required } : {}),
      };
    });
  }
}

/** A reference to a component, or a nullable one: pydantic gives such a property no title. */
function isReference(schema: JsonSchema): boolean {
  if ("$ref" in schema) return true;
  const { anyOf } = schema;
  return (
    Array.isArray(anyOf) &&
    anyOf.some((member: JsonSchema) => "$ref" in member) &&
    anyOf.every((member: JsonSchema) => "$ref" in member || member.type === "null")
  );
}

function propertySchema(key: string, field: Schema<unknown>, ctx: JsonSchemaContext): JsonSchema {
  const schema = ctx.of(field);
  return isReference(schema) ? schema : { ...schema, title: titleFromName(key) };
}

export const object = <S extends Shape>(name: string, shape: S, options?: ObjectOptions): ObjectSchema<S> =>
  new ObjectSchema(name, shape, options);
