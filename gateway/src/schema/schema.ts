/**
 * The schema core: the base class every kind extends, and the modifiers that wrap a schema
 * (nullable, optional, default). Validation follows pydantic v2 in lax (Python) mode, as FastAPI runs it
 * on a decoded JSON body; strict mode exists only for the first pass of a smart union.
 */
import { type Loc, type ParseResult, success, valueError } from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";

export interface Mode {
  readonly strict: boolean;
}
export const LAX: Mode = { strict: false };
export const STRICT: Mode = { strict: true };

// Method syntax keeps Schema<T> assignable to Schema<unknown>.
interface Refinement<T> {
  test(value: T): boolean;
  message(value: T): string;
}

export abstract class Schema<T> {
  /** Type level only: the parsed value. */
  declare readonly _output: T;
  /** Type level only: true when an object field may be absent and then stays absent. */
  declare readonly _optional: boolean;

  /** Shown as `description` in the JSON Schema. */
  readonly description: string | undefined;
  private refinements: readonly Refinement<T>[] = [];

  /** Validates the input of this kind; refinements run afterwards in `validate`. */
  protected abstract check(input: unknown, loc: Loc, mode: Mode): ParseResult<T>;
  /** pydantic's name of this kind inside a union's error loc: "str", "constrained-int", the model name. */
  protected abstract kindLabel(): string;
  protected abstract kindJsonSchema(ctx: JsonSchemaContext): JsonSchema;

  /** Validation with an explicit loc prefix; what containers call for their members. */
  validate(input: unknown, loc: Loc, mode: Mode = LAX): ParseResult<T> {
    const result = this.check(input, loc, mode);
    if (!result.ok) return result;
    for (const refinement of this.refinements) {
      if (!refinement.test(result.value)) {
        return { ok: false, issues: [valueError(loc, input, refinement.message(result.value))] };
      }
    }
    return result;
  }

  /** Validates `input`; every issue's loc starts with `loc` (by default `["body"]`). */
  parse(input: unknown, loc: Loc = ["body"]): ParseResult<T> {
    return this.validate(input, loc, LAX);
  }

  unionLabel(): string {
    let label = this.kindLabel();
    for (const { test } of this.refinements) label = `function-after[${test.name || "<lambda>"}(), ${label}]`;
    return label;
  }

  jsonSchema(ctx: JsonSchemaContext): JsonSchema {
    const schema = this.kindJsonSchema(ctx);
    return this.description === undefined ? schema : { ...schema, description: this.description };
  }

  /** Also accepts null (pydantic `Optional[X]`). */
  nullable(): Schema<T | null> {
    return new NullableSchema(this);
  }

  /** As an object field: may be absent, and is then absent from the output. An explicit null still fails. */
  optional(): OptionalSchema<T> {
    return new OptionalSchema(this);
  }

  /** As an object field: `value` (a fresh copy each time) when the key is absent. Not validated. */
  default(value: T): DefaultSchema<T> {
    return new DefaultSchema(this, value);
  }

  /**
   * A check after successful validation; when `test` answers false the issue is pydantic's
   * `value_error`: msg "Value error, <message>", ctx {error: <message>}. Checks run in order, the first
   * failing one is reported.
   */
  refine(test: (value: T) => boolean, message: string | ((value: T) => string)): this {
    const copy = this.clone();
    const text = typeof message === "string" ? () => message : message;
    copy.refinements = [...this.refinements, { test, message: text }];
    return copy;
  }

  describe(text: string): this {
    const copy = this.clone();
    (copy as { description: string | undefined }).description = text;
    return copy;
  }

  protected clone(): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this)), this);
  }
}

/** The parsed value of a schema (or of a query/path parameter set). */
export type Infer<S extends { readonly _output: unknown }> = S["_output"];

export class NullableSchema<T> extends Schema<T | null> {
  constructor(readonly inner: Schema<T>) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<T | null> {
    return input === null ? success(null) : this.inner.validate(input, loc, mode);
  }

  protected kindLabel(): string {
    return `nullable[${this.inner.unionLabel()}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return { anyOf: [ctx.of(this.inner), { type: "null" }] };
  }
}

/** A field that may be absent. Wraps the schema of the value; containers test for this class. */
export class OptionalSchema<T> extends Schema<T> {
  declare readonly _optional: true;

  constructor(readonly inner: Schema<T>) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<T> {
    return this.inner.validate(input, loc, mode);
  }

  protected kindLabel(): string {
    return this.inner.unionLabel();
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return ctx.of(this.inner);
  }

  override nullable(): OptionalSchema<T | null> {
    return new OptionalSchema(this.inner.nullable());
  }
}

/** A field with a default for an absent key. */
export class DefaultSchema<T> extends Schema<T> {
  constructor(
    readonly inner: Schema<T>,
    readonly defaultValue: T,
  ) {
    super();
  }

  /** A fresh copy, so a mutable default is never shared between parsed values. */
  produceDefault(): T {
    const value = this.defaultValue;
    return typeof value === "object" && value !== null ? structuredClone(value) : value;
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<T> {
    return this.inner.validate(input, loc, mode);
  }

  protected kindLabel(): string {
    return this.inner.unionLabel();
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return { ...ctx.of(this.inner), default: this.defaultValue };
  }

  override nullable(): DefaultSchema<T | null> {
    return new DefaultSchema<T | null>(this.inner.nullable(), this.defaultValue);
  }
}
