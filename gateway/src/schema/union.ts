import {
  failure,
  issue,
  type Loc,
  modelAttributesType,
  type ParseResult,
  type ValidationIssue,
} from "./issues.js";
import type { JsonSchema, JsonSchemaContext } from "./json-schema.js";
import { isPlainObject, type ObjectSchema, type Shape } from "./object.js";
import { pyReprString, pyStr } from "./py-format.js";
import { type Infer, type Mode, Schema, STRICT } from "./schema.js";

/**
 * pydantic's smart union, simplified: the first member that accepts the input in strict mode wins
 * ("12" stays a str in str | int), otherwise the first that accepts it in lax mode. When none does, every
 * member's issues are reported, each loc extended by the member's label ("str", "int", a model name).
 */
export class UnionSchema<M extends readonly Schema<unknown>[]> extends Schema<Infer<M[number]>> {
  constructor(readonly members: M) {
    super();
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<Infer<M[number]>> {
    if (!mode.strict) {
      for (const member of this.members) {
        const result = member.validate(input, loc, STRICT);
        if (result.ok) return result as ParseResult<Infer<M[number]>>;
      }
    }
    const issues: ValidationIssue[] = [];
    for (const member of this.members) {
      const result = member.validate(input, [...loc, member.unionLabel()], mode);
      if (result.ok) return result as ParseResult<Infer<M[number]>>;
      issues.push(...result.issues);
    }
    return failure(...issues);
  }

  protected kindLabel(): string {
    return `union[${this.members.map((member) => member.unionLabel()).join(",")}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return { anyOf: this.members.map((member) => ctx.of(member)) };
  }
}

type Members = { readonly [tag: string]: ObjectSchema<Shape> };

/**
 * pydantic's discriminated union of models (`Field(discriminator=key)`): the value of `key` picks the
 * model, and that model's issues carry the tag in their loc: [..., "vendorA", "speed"].
 */
export class DiscriminatedUnionSchema<M extends Members> extends Schema<Infer<M[keyof M]>> {
  constructor(
    readonly key: string,
    readonly members: M,
  ) {
    super();
    for (const [tag, member] of Object.entries(members)) {
      if (!(key in member.shape)) throw new Error(`model ${member.name} (tag ${tag}) has no field ${key}`);
    }
  }

  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<Infer<M[keyof M]>> {
    if (!isPlainObject(input)) return failure(modelAttributesType(loc, input));
    const discriminator = pyReprString(this.key);
    const tag = Object.hasOwn(input, this.key) ? input[this.key] : undefined;
    if (tag === undefined) {
      const msg = `Unable to extract tag using discriminator ${discriminator}`;
      return failure(issue("union_tag_not_found", loc, msg, input, { discriminator }));
    }
    const member =
      typeof tag === "string" && Object.hasOwn(this.members, tag) ? this.members[tag] : undefined;
    if (member === undefined) {
      const shown = pyStr(tag);
      const expected = Object.keys(this.members).map(pyReprString).join(", ");
      const msg = `Input tag '${shown}' found using ${discriminator} does not match any of the expected tags: ${expected}`;
      return failure(
        issue("union_tag_invalid", loc, msg, input, { discriminator, tag: shown, expected_tags: expected }),
      );
    }
    return member.validate(input, [...loc, tag as string], mode) as ParseResult<Infer<M[keyof M]>>;
  }

  protected kindLabel(): string {
    return `tagged-union[${Object.values(this.members)
      .map((member) => member.unionLabel())
      .join(",")}]`;
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    const oneOf = Object.values(this.members).map((member) => ctx.of(member));
    const mapping = Object.fromEntries(
      Object.entries(this.members).map(([tag, member]) => [tag, ctx.of(member).$ref]),
    );
    return { oneOf, discriminator: { propertyName: this.key, mapping } };
  }
}

export const union = <const M extends readonly Schema<unknown>[]>(members: M): UnionSchema<M> =>
  new UnionSchema(members);

export const discriminatedUnion = <M extends Members>(key: string, members: M): DiscriminatedUnionSchema<M> =>
  new DiscriminatedUnionSchema(key, members);
