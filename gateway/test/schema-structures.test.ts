/**
 * Models, lists, dicts and unions: collected issues, nested locs, defaults, nulls and extra keys, each
 * expected entry as pydantic 2.13 produced it under FastAPI (validate_python with from_attributes=True).
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import * as s from "../src/schema/index.js";

const VideoSettings = s.object("VideoSettings", {
  quality: s.enumOf(["very_high", "high", "medium", "low"]).default("high"),
  encoding: s.enumOf(["VP8", "H264"]).default("H264"),
});
const VendorA = s.object("VendorAVoiceSettings", {
  provider: s.literal("vendorA").default("vendorA"),
  speed: s.number({ ge: 0.8, le: 1.2 }).default(1),
});
const VendorE = s.object("VendorEVoiceSettings", {
  provider: s.literal("vendorE").default("vendorE"),
  model: s.enumOf(["s1", "s2"]).default("s2"),
});
const VendorD = s.object("VendorDVoiceSettings", {
  provider: s.literal("vendorD").default("vendorD"),
  speed: s.number({ ge: 0.6, le: 1.5 }).default(1),
});
const VoiceSettings = s.discriminatedUnion("provider", {
  vendorA: VendorA,
  vendorE: VendorE,
  vendorD: VendorD,
});
const Persona = s.object("AvatarPersona", {
  voice_id: s.uuid().optional(),
  voice_settings: VoiceSettings.nullable().optional(),
});
const Link = s.object("Link", { href: s.httpUrl(), title: s.string({ maxLength: 10 }).optional() });
const Body = s.object("FullTokenRequest", {
  mode: s.literal("FULL").default("FULL"),
  avatar_id: s.uuid(),
  is_sandbox: s.boolean().default(false),
  video_settings: VideoSettings.nullable().optional(),
  max_session_duration: s.int({ ge: 1 }).optional(),
  name: s.string({ minLength: 1, maxLength: 64 }),
  avatar_persona: Persona.nullable().optional(),
  dynamic_variables: s.record(s.string({ maxLength: 1000 }), { maxEntries: 2, keyMaxLength: 4 }).optional(),
  vars: s.record(s.union([s.string(), s.int(), s.number(), s.boolean()])).optional(),
  links: s.array(Link, { maxItems: 2 }).optional(),
  tags: s.array(s.string(), { minItems: 2 }).optional(),
});
const AVATAR = "123e4567-e89b-12d3-a456-426614174000";
const valid = { avatar_id: AVATAR, name: "Ann" };

function issues(input: unknown): s.ValidationIssue[] {
  const result = Body.parse(input);
  if (result.ok) throw new Error(`expected issues, got ${JSON.stringify(result.value)}`);
  return result.issues;
}

describe("object", () => {
  it("applies defaults for absent keys, leaves optional ones out and drops extra keys", () => {
    expect(Body.parse({ ...valid, extra: 1, video_settings: { quality: "low", junk: true } })).toEqual({
      ok: true,
      value: {
        mode: "FULL",
        avatar_id: AVATAR,
        is_sandbox: false,
        video_settings: { quality: "low", encoding: "H264" },
        name: "Ann",
      },
    });
  });

  it("accepts null only for nullable fields", () => {
    expect(Body.parse({ ...valid, video_settings: null })).toMatchObject({
      ok: true,
      value: { video_settings: null },
    });
    expect(issues({ ...valid, name: null, max_session_duration: null })).toEqual([
      {
        type: "int_type",
        loc: ["body", "max_session_duration"],
        msg: "Input should be a valid integer",
        input: null,
      },
      { type: "string_type", loc: ["body", "name"], msg: "Input should be a valid string", input: null },
    ]);
  });

  it("an explicit null for a field with a default is validated, not defaulted", () => {
    expect(issues({ ...valid, is_sandbox: null })).toEqual([
      { type: "bool_type", loc: ["body", "is_sandbox"], msg: "Input should be a valid boolean", input: null },
    ]);
  });

  it("collects every issue in field order; missing carries the parent object", () => {
    const input = { mode: "LITE", avatar_id: "z", video_settings: [1], extra: true };
    expect(issues(input)).toEqual([
      {
        type: "literal_error",
        loc: ["body", "mode"],
        msg: "Input should be 'FULL'",
        input: "LITE",
        ctx: { expected: "'FULL'" },
      },
      {
        type: "uuid_parsing",
        loc: ["body", "avatar_id"],
        msg: "Input should be a valid UUID, invalid character: found `z` at 1",
        input: "z",
        ctx: { error: "invalid character: found `z` at 1" },
      },
      {
        type: "model_attributes_type",
        loc: ["body", "video_settings"],
        msg: "Input should be a valid dictionary or object to extract fields from",
        input: [1],
      },
      { type: "missing", loc: ["body", "name"], msg: "Field required", input },
    ]);
  });

  it.each([[[]], ["abc"], [5], [null]])("a non-object body %j is model_attributes_type", (input) => {
    expect(issues(input)).toEqual([
      {
        type: "model_attributes_type",
        loc: ["body"],
        msg: "Input should be a valid dictionary or object to extract fields from",
        input,
      },
    ]);
  });

  it("nested models extend the loc", () => {
    expect(issues({ ...valid, video_settings: { quality: "HIGH" } })).toEqual([
      {
        type: "enum",
        loc: ["body", "video_settings", "quality"],
        msg: "Input should be 'very_high', 'high', 'medium' or 'low'",
        input: "HIGH",
        ctx: { expected: "'very_high', 'high', 'medium' or 'low'" },
      },
    ]);
  });

  it("gives each parse its own copy of a mutable default", () => {
    const WithList = s.object("WithList", { items: s.array(s.int()).default([]) });
    const first = WithList.parse({});
    if (!first.ok) throw new Error("expected success");
    first.value.items.push(1);
    expect(WithList.parse({})).toEqual({ ok: true, value: { items: [] } });
  });

  it("keeps a key named __proto__ as an own property", () => {
    const Proto = s.object("Proto", { ["__proto__"]: s.string(), map: s.record(s.int()) });
    const result = Proto.parse(JSON.parse('{"__proto__": "x", "map": {"__proto__": 1}}'));
    if (!result.ok) throw new Error("expected success");
    expect(Object.hasOwn(result.value, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(Object.entries(result.value.map)).toEqual([["__proto__", 1]]);
  });

  it("extend adds fields after the base ones", () => {
    const Lite = Body.extend("LiteTokenRequest", { mode: s.literal("LITE", "CUSTOM") });
    expect(Object.keys(Lite.shape).slice(0, 2)).toEqual(["mode", "avatar_id"]);
    expect(Lite.parse({ ...valid, mode: "CUSTOM" })).toMatchObject({ ok: true, value: { mode: "CUSTOM" } });
  });

  it("a refinement of the whole model reports at the model's loc", () => {
    const Exclusive = s
      .object("Exclusive", { a: s.int().optional(), b: s.int().optional() })
      .refine((v) => v.a === undefined || v.b === undefined, "a and b are mutually exclusive");
    const input = { a: 1, b: 2 };
    expect(Exclusive.parse(input)).toEqual({
      ok: false,
      issues: [
        {
          type: "value_error",
          loc: ["body"],
          msg: "Value error, a and b are mutually exclusive",
          input,
          ctx: { error: "a and b are mutually exclusive" },
        },
      ],
    });
  });
});

describe("discriminated union", () => {
  const at = (voice_settings: unknown) => issues({ ...valid, avatar_persona: { voice_settings } });
  const loc = ["body", "avatar_persona", "voice_settings"];
  const expectedTags = "'vendorA', 'vendorE', 'vendorD'";

  it("picks the member by tag and applies its defaults", () => {
    const result = Body.parse({ ...valid, avatar_persona: { voice_settings: { provider: "vendorE" } } });
    expect(result).toMatchObject({
      ok: true,
      value: { avatar_persona: { voice_settings: { provider: "vendorE", model: "s2" } } },
    });
  });

  it("adds the tag to the loc of a member's issue", () => {
    expect(at({ provider: "vendorA", speed: 2 })).toEqual([
      {
        type: "less_than_equal",
        loc: [...loc, "vendorA", "speed"],
        msg: "Input should be less than or equal to 1.2",
        input: 2,
        ctx: { le: 1.2 },
      },
    ]);
  });

  it.each([
    ["x", "x"],
    [5, "5"],
    [null, "None"],
    [true, "True"],
    [["a"], "['a']"],
  ])("tag %j is union_tag_invalid showing %s", (provider, shown) => {
    const input = { provider };
    expect(at(input)).toEqual([
      {
        type: "union_tag_invalid",
        loc,
        msg: `Input tag '${shown}' found using 'provider' does not match any of the expected tags: ${expectedTags}`,
        input,
        ctx: { discriminator: "'provider'", tag: shown, expected_tags: expectedTags },
      },
    ]);
  });

  it("an absent tag is union_tag_not_found", () => {
    expect(at({ speed: 1 })).toEqual([
      {
        type: "union_tag_not_found",
        loc,
        msg: "Unable to extract tag using discriminator 'provider'",
        input: { speed: 1 },
        ctx: { discriminator: "'provider'" },
      },
    ]);
  });

  it("a non-object is model_attributes_type", () => {
    expect(at("abc")).toEqual([
      {
        type: "model_attributes_type",
        loc,
        msg: "Input should be a valid dictionary or object to extract fields from",
        input: "abc",
      },
    ]);
  });

  it("refuses a member without the discriminator field", () => {
    expect(() => s.discriminatedUnion("provider", { a: s.object("NoTag", { x: s.int() }) })).toThrow(
      /no field provider/,
    );
  });
});

describe("union", () => {
  const scalar = s.union([s.string(), s.int(), s.number(), s.boolean()]);

  it.each([
    ["12", "12"],
    [12, 12],
    [1.5, 1.5],
    [true, true],
  ])("keeps %j as the member that matches it strictly", (input, value) => {
    expect(scalar.parse(input)).toEqual({ ok: true, value });
  });

  it("falls back to the first lax match", () => {
    expect(s.union([s.int(), s.boolean()]).parse("1")).toEqual({ ok: true, value: 1 });
    expect(s.union([s.boolean(), s.int()]).parse("1")).toEqual({ ok: true, value: true });
  });

  it("reports one entry per member, labelled like pydantic", () => {
    const input = { x: "y" };
    const wide = s.union([
      s.string({ maxLength: 2 }),
      s.int({ ge: 1 }),
      s.number(),
      Link,
      s.literal("a", "b"),
      s.enumOf(["a", "b"], { name: "Q" }),
      s.uuid(),
      s.array(s.int()),
      s.datetime(),
      s.record(s.int()),
    ]);
    const result = wide.parse(input);
    expect(result.ok ? [] : result.issues.map((entry) => [entry.loc.slice(1).join("."), entry.type])).toEqual(
      [
        ["constrained-str", "string_type"],
        ["constrained-int", "int_type"],
        ["float", "float_type"],
        ["Link.href", "missing"],
        ["literal['a','b']", "literal_error"],
        ["str-enum[Q]", "enum"],
        ["uuid", "uuid_type"],
        ["list[int]", "list_type"],
        ["datetime", "datetime_type"],
        ["dict[str,int].x", "int_parsing"],
      ],
    );
  });

  it("inside a record, member labels follow the key", () => {
    expect(issues({ ...valid, vars: { a: null } })).toEqual([
      {
        type: "string_type",
        loc: ["body", "vars", "a", "str"],
        msg: "Input should be a valid string",
        input: null,
      },
      {
        type: "int_type",
        loc: ["body", "vars", "a", "int"],
        msg: "Input should be a valid integer",
        input: null,
      },
      {
        type: "float_type",
        loc: ["body", "vars", "a", "float"],
        msg: "Input should be a valid number",
        input: null,
      },
      {
        type: "bool_type",
        loc: ["body", "vars", "a", "bool"],
        msg: "Input should be a valid boolean",
        input: null,
      },
    ]);
  });
});

describe("array", () => {
  it("adds the index to item locs", () => {
    expect(issues({ ...valid, links: [{ href: "http://x.com" }, { href: 1 }] })).toEqual([
      {
        type: "url_type",
        loc: ["body", "links", 1, "href"],
        msg: "URL input should be a string or URL",
        input: 1,
      },
    ]);
  });

  it("too many items is reported alone", () => {
    const links = [{}, {}, {}];
    expect(issues({ ...valid, links })).toEqual([
      {
        type: "too_long",
        loc: ["body", "links"],
        msg: "List should have at most 2 items after validation, not 3",
        input: links,
        ctx: { field_type: "List", max_length: 2, actual_length: 3 },
      },
    ]);
  });

  it("too few items only once every item is valid", () => {
    expect(issues({ ...valid, tags: [1] })).toEqual([
      { type: "string_type", loc: ["body", "tags", 0], msg: "Input should be a valid string", input: 1 },
    ]);
    expect(issues({ ...valid, tags: ["a"] })).toEqual([
      {
        type: "too_short",
        loc: ["body", "tags"],
        msg: "List should have at least 2 items after validation, not 1",
        input: ["a"],
        ctx: { field_type: "List", min_length: 2, actual_length: 1 },
      },
    ]);
  });

  it.each([[{ a: 1 }], ["abc"], [null]])("%j is list_type", (links) => {
    expect(issues({ ...valid, links })).toEqual([
      { type: "list_type", loc: ["body", "links"], msg: "Input should be a valid list", input: links },
    ]);
  });

  it("singular wording for one item", () => {
    expect(s.array(s.int(), { maxItems: 1 }).parse([1, 2])).toMatchObject({
      issues: [{ msg: "List should have at most 1 item after validation, not 2" }],
    });
  });
});

describe("record", () => {
  it("keys too long are reported at [key, '[key]'], values at [key]", () => {
    expect(issues({ ...valid, dynamic_variables: { abcde: "v", a: 1 } })).toEqual([
      {
        type: "string_too_long",
        loc: ["body", "dynamic_variables", "abcde", "[key]"],
        msg: "String should have at most 4 characters",
        input: "abcde",
        ctx: { max_length: 4 },
      },
      {
        type: "string_type",
        loc: ["body", "dynamic_variables", "a"],
        msg: "Input should be a valid string",
        input: 1,
      },
    ]);
  });

  it("counts entries only when every entry is valid", () => {
    const three = { a: "1", b: "2", c: "3" };
    expect(issues({ ...valid, dynamic_variables: three })).toEqual([
      {
        type: "too_long",
        loc: ["body", "dynamic_variables"],
        msg: "Dictionary should have at most 2 items after validation, not 3",
        input: three,
        ctx: { field_type: "Dictionary", max_length: 2, actual_length: 3 },
      },
    ]);
    expect(issues({ ...valid, dynamic_variables: { abcde: "1", b: "2", c: "3" } })).toHaveLength(1);
  });

  it("at the limit passes", () => {
    expect(Body.parse({ ...valid, dynamic_variables: { abcd: "1", b: "2" } })).toMatchObject({ ok: true });
  });

  it.each([[[]], ["x"], [null]])("%j is dict_type", (dynamic_variables) => {
    expect(issues({ ...valid, dynamic_variables })).toEqual([
      {
        type: "dict_type",
        loc: ["body", "dynamic_variables"],
        msg: "Input should be a valid dictionary",
        input: dynamic_variables,
      },
    ]);
  });
});

describe("types", () => {
  it("infers the parsed value", () => {
    type Parsed = s.Infer<typeof Body>;
    expectTypeOf<Parsed["mode"]>().toEqualTypeOf<"FULL">();
    expectTypeOf<Parsed["is_sandbox"]>().toEqualTypeOf<boolean>();
    expectTypeOf<Parsed["avatar_id"]>().toEqualTypeOf<string>();
    expectTypeOf<Parsed["video_settings"]>().toEqualTypeOf<
      { quality: "very_high" | "high" | "medium" | "low"; encoding: "VP8" | "H264" } | null | undefined
    >();
    expectTypeOf<Parsed>().toHaveProperty("max_session_duration").toEqualTypeOf<number | undefined>();
    expectTypeOf<s.Infer<typeof VoiceSettings>["provider"]>().toEqualTypeOf<
      "vendorA" | "vendorE" | "vendorD"
    >();
    expectTypeOf<s.Infer<typeof Body.shape.vars>>().toEqualTypeOf<
      Record<string, string | number | boolean>
    >();
    expectTypeOf<Parsed["links"]>().toEqualTypeOf<{ href: string; title?: string }[] | undefined>();
  });
});
