import { failure, issue, type Loc, type ParseResult, success, type ValidationIssue } from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { plural } from "./py-format.js";
import { type Infer, type Mode, Schema } from "./schema.js";

export interface SizeOptions {
  minItems?: number;
  maxItems?: number;
}

/** pydantic's too_short / too_long for a list ("List") or a dict ("Dictionary"). */
export function sizeIssue(
  fieldType: "List" | "Dictionary",
  actual: number,
  { minItems, maxItems }: SizeOptions,
  loc: Loc,
  input: unknown,
): ValidationIssue | undefined {
  if (maxItems !== undefined && actual > maxItems) {
    const msg = `${fieldType} should have at most ${maxItems} ${plural(maxItems, "item")} after validation, not ${actual}`;
    return issue("too_long", loc, msg, input, {
      field_type: fieldType,
      max_length: maxItems,
      actual_length: actual,
    });
  }
  if (minItems !== undefined && actual < minItems) {
    const msg = `${fieldType} should have at least ${minItems} ${plural(minItems, "item")} after validation, not ${actual}`;
    return issue("too_short", loc, msg, input, {
      field_type: fieldType,
      min_length: minItems,
      actual_length: actual,
    });
  }
  return undefined;
}

/** pydantic `list[X]`. Too many items is reported alone; too few only when every item is valid. */
export class ArraySchema<I extends Schema<unknown>> extends Schema<Infer<I>[]> {
  constructor(
    readonly item: I,
    readonly options: SizeOptions = {},
  ) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<Infer<I>[]> {
    if (!Array.isArray(input)) return failure(issue("list_type", loc, "Input should be a valid list", input));
    const tooLong = sizeIssue("List", input.length, { maxItems: this.options.maxItems }, loc, input);
    if (tooLong) return failure(tooLong);
    const out: Infer<I>[] = [];
    const issues: ValidationIssue[] = [];
    input.forEach((element, index) => {
      const result = this.item.validate(element, [...loc, index], mode);
      if (result.ok) out.push(result.value as Infer<I>);
      else issues.push(...result.issues);
    });
    if (issues.length > 0) return failure(...issues);
    const tooShort = sizeIssue("List", out.length, { minItems: this.options.minItems }, loc, input);
    return tooShort ? failure(tooShort) : success(out);
  }

  protected kindLabel(): string {
    return `list[${this.item.unionLabel()}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    const { minItems, maxItems } = this.options;
    return {
      type: "array",
      items: ctx.of(this.item),
      ...(minItems === undefined ? {} : { minItems }),
      ...(maxItems === undefined ? {} : { maxItems }),
    };
  }
}

export const array = <I extends Schema<unknown>>(item: I, options?: SizeOptions): ArraySchema<I> =>
  new ArraySchema(item, options);
