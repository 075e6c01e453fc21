import { sizeIssue } from "./array.js";
import { failure, issue, type Loc, type ParseResult, success, type ValidationIssue } from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { isPlainObject, setOwn } from "./object.js";
import { type Infer, type Mode, Schema } from "./schema.js";
import { StringSchema } from "./string.js";

export interface RecordOptions {
  minEntries?: number;
  maxEntries?: number;
  /** Shorthand for `keys: s.string({ maxLength })`. */
  keyMaxLength?: number;
  /** Schema of the keys; a string schema. */
  keys?: StringSchema;
}

/**
 * pydantic `dict[str, X]`. A key fault is reported at [..., key, "[key]"], a value fault at [..., key];
 * the entry count is checked only when every entry is valid.
 */
export class RecordSchema<V extends Schema<unknown>> extends Schema<Record<string, Infer<V>>> {
  readonly keys: StringSchema;

  constructor(
    readonly values: V,
    readonly options: RecordOptions = {},
  ) {
    super();
    const { keys, keyMaxLength } = options;
    this.keys = keys ?? new StringSchema(keyMaxLength === undefined ? {} : { maxLength: keyMaxLength });
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<Record<string, Infer<V>>> {
    if (!isPlainObject(input))
      return failure(issue("dict_type", loc, "Input should be a valid dictionary", input));
    const out: Record<string, Infer<V>> = {};
    const issues: ValidationIssue[] = [];
    for (const [key, value] of Object.entries(input)) {
      const keyResult = this.keys.validate(key, [...loc, key, "[key]"], mode);
      const valueResult = this.values.validate(value, [...loc, key], mode);
      if (!keyResult.ok) issues.push(...keyResult.issues);
      if (!valueResult.ok) issues.push(...valueResult.issues);
      if (keyResult.ok && valueResult.ok) setOwn(out, keyResult.value, valueResult.value);
    }
    if (issues.length > 0) return failure(...issues);
    const { minEntries, maxEntries } = this.options;
    const size = Object.keys(out).length;
    const problem = sizeIssue("Dictionary", size, { minItems: minEntries, maxItems: maxEntries }, loc, input);
    return problem ? failure(problem) : success(out);
  }

  protected kindLabel(): string {
    return `dict[${this.keys.unionLabel()},${this.values.unionLabel()}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    const { minEntries, maxEntries } = this.options;
    const keySchema = ctx.of(this.keys);
    const { type: _string, ...propertyNames } = keySchema;
    return {
      type: "object",
      additionalProperties: ctx.of(this.values),
      ...(Object.keys(propertyNames).length > 0 ? { propertyNames } : {}),
      ...(minEntries === undefined ? {} : { minProperties: minEntries }),
      ...(maxEntries === undefined ? {} : { maxProperties: maxEntries }),
    };
  }
}

export const record = <V extends Schema<unknown>>(values: V, options?: RecordOptions): RecordSchema<V> =>
  new RecordSchema(values, options);
