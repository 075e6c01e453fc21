/**
 * Scalars against the entries pydantic 2.13 / pydantic-core 2.46 produced for the same input
 * (FastAPI's lax mode). Each row: schema, input, and the exact parsed value or 422 entry.
 */
import { describe, expect, it } from "vitest";
import * as s from "../src/schema/index.js";

type Row = [
  label: string,
  schema: s.Schema<unknown>,
  input: unknown,
  expected: { value: unknown } | s.ValidationIssue,
];

function check(schema: s.Schema<unknown>, input: unknown, expected: { value: unknown } | s.ValidationIssue) {
  const result = schema.parse(input, ["body", "f"]);
  if ("value" in expected) expect(result).toEqual({ ok: true, value: expected.value });
  else expect(result).toEqual({ ok: false, issues: [expected] });
}

const loc = ["body", "f"];
const e = (type: string, msg: string, input: unknown, ctx?: Record<string, unknown>): s.ValidationIssue =>
  ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx };
const ok = (value: unknown) => ({ value });

describe("string", () => {
  const name = s.string({ minLength: 1, maxLength: 64 });
  const rows: Row[] = [
    ["inside lower bound", name, "a", ok("a")],
    ["at upper bound", name, "a".repeat(64), ok("a".repeat(64))],
    ["upper bound counts code points", name, "😀".repeat(64), ok("😀".repeat(64))],
    [
      "below lower bound",
      name,
      "",
      e("string_too_short", "String should have at least 1 character", "", { min_length: 1 }),
    ],
    [
      "above upper bound",
      name,
      "a".repeat(65),
      e("string_too_long", "String should have at most 64 characters", "a".repeat(65), { max_length: 64 }),
    ],
    [
      "plural minimum",
      s.string({ minLength: 2 }),
      "a",
      e("string_too_short", "String should have at least 2 characters", "a", { min_length: 2 }),
    ],
    [
      "singular maximum",
      s.string({ maxLength: 1 }),
      "ab",
      e("string_too_long", "String should have at most 1 character", "ab", { max_length: 1 }),
    ],
    ["number is not coerced", name, 5, e("string_type", "Input should be a valid string", 5)],
    ["boolean", name, true, e("string_type", "Input should be a valid string", true)],
    ["null", name, null, e("string_type", "Input should be a valid string", null)],
    ["object", name, { a: 1 }, e("string_type", "Input should be a valid string", { a: 1 })],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("int", () => {
  const positive = s.int({ ge: 1 });
  const parsing = "Input should be a valid integer, unable to parse string as an integer";
  const rows: Row[] = [
    ["at lower bound", positive, 1, ok(1)],
    [
      "below lower bound",
      positive,
      0,
      e("greater_than_equal", "Input should be greater than or equal to 1", 0, { ge: 1 }),
    ],
    ["numeric string", s.int(), "12", ok(12)],
    ["padded string", s.int(), " 12 ", ok(12)],
    ["signed string", s.int(), "-12", ok(-12)],
    ["zero fraction string", s.int(), "12.00", ok(12)],
    ["underscores", s.int(), "1_000", ok(1000)],
    ["integral float", s.int(), 12.0, ok(12)],
    ["true", s.int(), true, ok(1)],
    ["false", s.int(), false, ok(0)],
    [
      "bound keeps the raw input",
      positive,
      "0",
      e("greater_than_equal", "Input should be greater than or equal to 1", "0", { ge: 1 }),
    ],
    [
      "fraction",
      s.int(),
      12.5,
      e("int_from_float", "Input should be a valid integer, got a number with a fractional part", 12.5),
    ],
    ["fraction string", s.int(), "12.5", e("int_parsing", parsing, "12.5")],
    ["trailing point", s.int(), "12.", e("int_parsing", parsing, "12.")],
    ["exponent string", s.int(), "1e3", e("int_parsing", parsing, "1e3")],
    ["double underscore", s.int(), "1__0", e("int_parsing", parsing, "1__0")],
    ["empty string", s.int(), "", e("int_parsing", parsing, "")],
    ["null", s.int(), null, e("int_type", "Input should be a valid integer", null)],
    ["list", s.int(), [], e("int_type", "Input should be a valid integer", [])],
    ["gt", s.int({ gt: 1, lt: 5 }), 1, e("greater_than", "Input should be greater than 1", 1, { gt: 1 })],
    ["lt", s.int({ gt: 1, lt: 5 }), 5, e("less_than", "Input should be less than 5", 5, { lt: 5 })],
    [
      "le before ge",
      s.int({ ge: 5, le: 1 }),
      3,
      e("less_than_equal", "Input should be less than or equal to 1", 3, { le: 1 }),
    ],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("number", () => {
  const speed = s.number({ ge: 0.8, le: 1.2 });
  const rows: Row[] = [
    ["at lower bound", speed, 0.8, ok(0.8)],
    ["at upper bound", speed, 1.2, ok(1.2)],
    [
      "below",
      speed,
      0.79,
      e("greater_than_equal", "Input should be greater than or equal to 0.8", 0.79, { ge: 0.8 }),
    ],
    [
      "above",
      speed,
      1.21,
      e("less_than_equal", "Input should be less than or equal to 1.2", 1.21, { le: 1.2 }),
    ],
    [
      "numeric string above",
      speed,
      "2",
      e("less_than_equal", "Input should be less than or equal to 1.2", "2", { le: 1.2 }),
    ],
    ["string", s.number(), " 1.5 ", ok(1.5)],
    ["leading point", s.number(), ".5", ok(0.5)],
    ["exponent", s.number(), "1.5e3", ok(1500)],
    ["boolean", s.number(), true, ok(1)],
    [
      "small bound printed positionally",
      s.number({ le: 1e-5 }),
      1,
      e("less_than_equal", "Input should be less than or equal to 0.00001", 1, { le: 1e-5 }),
    ],
    [
      "large bound printed positionally",
      s.number({ le: 1e16 }),
      1e17,
      e("less_than_equal", "Input should be less than or equal to 10000000000000000", 1e17, { le: 1e16 }),
    ],
    [
      "infinity string meets the bound first",
      speed,
      "inf",
      e("less_than_equal", "Input should be less than or equal to 1.2", "inf", { le: 1.2 }),
    ],
    [
      "infinity is refused",
      s.number(),
      "-Infinity",
      e("finite_number", "Input should be a finite number", "-Infinity"),
    ],
    [
      "word",
      s.number(),
      "abc",
      e("float_parsing", "Input should be a valid number, unable to parse string as a number", "abc"),
    ],
    ["null", s.number(), null, e("float_type", "Input should be a valid number", null)],
    ["gt", s.number({ gt: 0 }), "-1", e("greater_than", "Input should be greater than 0", "-1", { gt: 0 })],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("boolean", () => {
  const b = s.boolean();
  const parsing = "Input should be a valid boolean, unable to interpret input";
  const words: [string, boolean][] = [
    ["0", false],
    ["off", false],
    ["F", false],
    ["FALSE", false],
    ["n", false],
    ["No", false],
    ["1", true],
    ["oN", true],
    ["t", true],
    ["True", true],
    ["Y", true],
    ["yes", true],
  ];
  it.each(words)("word %s", (word, value) => check(b, word, ok(value)));
  const rows: Row[] = [
    ["0", b, 0, ok(false)],
    ["1", b, 1, ok(true)],
    ["other integer", b, 2, e("bool_parsing", parsing, 2)],
    ["padded word", b, " true ", e("bool_parsing", parsing, " true ")],
    ["fraction", b, 1.5, e("bool_type", "Input should be a valid boolean", 1.5)],
    ["beyond i64", b, 1e20, e("bool_type", "Input should be a valid boolean", 1e20)],
    ["null", b, null, e("bool_type", "Input should be a valid boolean", null)],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("literal and enum", () => {
  const mode = s.literal("FULL");
  const quality = s.enumOf(["very_high", "high", "medium", "low"]);
  const expected4 = "'very_high', 'high', 'medium' or 'low'";
  const rows: Row[] = [
    ["literal match", mode, "FULL", ok("FULL")],
    [
      "literal case differs",
      mode,
      "full",
      e("literal_error", "Input should be 'FULL'", "full", { expected: "'FULL'" }),
    ],
    ["literal null", mode, null, e("literal_error", "Input should be 'FULL'", null, { expected: "'FULL'" })],
    [
      "two literals",
      s.literal("a", "b"),
      1,
      e("literal_error", "Input should be 'a' or 'b'", 1, { expected: "'a' or 'b'" }),
    ],
    [
      "number literals",
      s.literal(1, 2),
      "1",
      e("literal_error", "Input should be 1 or 2", "1", { expected: "1 or 2" }),
    ],
    [
      "quotes as Python repr",
      s.literal("it's", "a\\b"),
      0,
      e("literal_error", `Input should be "it's" or 'a\\\\b'`, 0, { expected: `"it's" or 'a\\\\b'` }),
    ],
    ["enum match", quality, "high", ok("high")],
    [
      "enum case differs",
      quality,
      "HIGH",
      e("enum", `Input should be ${expected4}`, "HIGH", { expected: expected4 }),
    ],
    ["enum wrong type", quality, 5, e("enum", `Input should be ${expected4}`, 5, { expected: expected4 })],
    [
      "two values",
      s.enumOf(["VP8", "H264"]),
      "x",
      e("enum", "Input should be 'VP8' or 'H264'", "x", { expected: "'VP8' or 'H264'" }),
    ],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("uuid", () => {
  const id = "123e4567-e89b-12d3-a456-426614174000";
  const parsing = (input: string, error: string) =>
    e("uuid_parsing", `Input should be a valid UUID, ${error}`, input, { error });
  const rows: Row[] = [
    ["hyphenated", s.uuid(), id, ok(id)],
    ["upper case", s.uuid(), id.toUpperCase(), ok(id)],
    ["simple", s.uuid(), id.replace(/-/g, ""), ok(id)],
    ["braced", s.uuid(), `{${id}}`, ok(id)],
    ["urn", s.uuid(), `urn:uuid:${id}`, ok(id)],
    [
      "short",
      s.uuid(),
      "abc",
      parsing("abc", "invalid length: expected length 32 for simple format, found 3"),
    ],
    ["empty", s.uuid(), "", parsing("", "invalid length: expected length 32 for simple format, found 0")],
    ["bad character", s.uuid(), "z23", parsing("z23", "invalid character: found `z` at 1")],
    [
      "bad character after urn",
      s.uuid(),
      "urn:uuid:zz",
      parsing("urn:uuid:zz", "invalid character: found `z` at 10"),
    ],
    [
      "bad character position in bytes",
      s.uuid(),
      "123é567-e89b-12d3-a456-426614174000",
      parsing("123é567-e89b-12d3-a456-426614174000", "invalid character: found `é` at 4"),
    ],
    [
      "two groups",
      s.uuid(),
      "123e4567-e89b",
      parsing("123e4567-e89b", "invalid group count: expected 5, found 2"),
    ],
    [
      "short last group",
      s.uuid(),
      "123e4567-e89b-12d3-a456-426",
      parsing("123e4567-e89b-12d3-a456-426", "invalid group length in group 4: expected 12, found 3"),
    ],
    [
      "long fourth group",
      s.uuid(),
      "123e4567-e89b-12d3-a4567-42661417400",
      parsing("123e4567-e89b-12d3-a4567-42661417400", "invalid group length in group 3: expected 4, found 5"),
    ],
    [
      "braced, right length: explained from the inside",
      s.uuid(),
      "{123e4567-e89b-12d3-a456-42661417400z}",
      parsing("{123e4567-e89b-12d3-a456-42661417400z}", "invalid character: found `z` at 36"),
    ],
    [
      "braced, wrong length: last group measured on the whole input",
      s.uuid(),
      "{123e4567-e89b-12d3-a456-4266141740000}",
      parsing(
        "{123e4567-e89b-12d3-a456-4266141740000}",
        "invalid group length in group 4: expected 12, found 15",
      ),
    ],
    ["number", s.uuid(), 5, e("uuid_type", "UUID input should be a string, bytes or UUID object", 5)],
    ["null", s.uuid(), null, e("uuid_type", "UUID input should be a string, bytes or UUID object", null)],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("url", () => {
  const http = s.url({ schemes: ["http", "https"] });
  const parsing = (input: string, error: string) =>
    e("url_parsing", `Input should be a valid URL, ${error}`, input, { error });
  const scheme = (input: string) =>
    e("url_scheme", "URL scheme should be 'http' or 'https'", input, {
      expected_schemes: "'http' or 'https'",
    });
  const rows: Row[] = [
    ["normalised", http, "HTTPS://Example.COM/a b?q=1#f", ok("https://example.com/a%20b?q=1#f")],
    ["trailing slash added", http, "http://x.com", ok("http://x.com/")],
    ["relative", http, "example.com", parsing("example.com", "relative URL without a base")],
    ["empty", http, "", parsing("", "input is empty")],
    ["empty host", http, "http://", parsing("http://", "empty host")],
    ["bad port", http, "http://x.com:99999", parsing("http://x.com:99999", "invalid port number")],
    ["bad IPv4", http, "http://1.2.3.256", parsing("http://1.2.3.256", "invalid IPv4 address")],
    ["bad IPv6", http, "http://[::1", parsing("http://[::1", "invalid IPv6 address")],
    [
      "bad domain",
      http,
      "https://exa mple.com",
      parsing("https://exa mple.com", "invalid international domain name"),
    ],
    ["other scheme", http, "ftp://x.com", scheme("ftp://x.com")],
    ["any scheme allowed", s.url(), "mailto:x@y.com", ok("mailto:x@y.com")],
    ["not a string", http, 5, e("url_type", "URL input should be a string or URL", 5)],
    [
      "too long",
      s.httpUrl(),
      `http://x.com/${"a".repeat(2071)}`,
      e("url_too_long", "URL should have at most 2083 characters", `http://x.com/${"a".repeat(2071)}`, {
        max_length: 2083,
      }),
    ],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("datetime", () => {
  const dt = s.datetime();
  const fromDate = (input: string, error: string) =>
    e("datetime_from_date_parsing", `Input should be a valid datetime or date, ${error}`, input, { error });
  const rows: Row[] = [
    ["zulu", dt, "2026-11-22T10:00:00.000Z", ok(new Date("2026-11-22T10:00:00.000Z"))],
    ["offset", dt, "2026-11-22T10:00:00+02:00", ok(new Date("2026-11-22T08:00:00Z"))],
    [
      "compact offset, space, comma fraction",
      dt,
      "2026-11-22 10:00:00,5-0130",
      ok(new Date("2026-11-22T11:30:00.500Z")),
    ],
    ["no seconds, naive as UTC", dt, "2026-11-22T10:00", ok(new Date("2026-11-22T10:00:00Z"))],
    ["date only is midnight", dt, "2026-11-22", ok(new Date("2026-11-22T00:00:00Z"))],
    ["unix seconds", dt, 1700000000, ok(new Date(1700000000000))],
    ["unix seconds as string", dt, "1700000000.5", ok(new Date(1700000000500))],
    ["unix milliseconds beyond 2e10", dt, 20000000001, ok(new Date(20000000001))],
    [
      "month out of range",
      dt,
      "2026-13-22T10:00:00Z",
      fromDate("2026-13-22T10:00:00Z", "month value is outside expected range of 1-12"),
    ],
    ["day out of range", dt, "2023-02-29", fromDate("2023-02-29", "day value is outside expected range")],
    [
      "bad time",
      dt,
      "2026-11-22T25:00:00Z",
      fromDate("2026-11-22T25:00:00Z", "unexpected extra characters at the end of the input"),
    ],
    ["short", dt, "abc", fromDate("abc", "input is too short")],
    [
      "separator",
      dt,
      "2026/11/22T10:00:00Z",
      fromDate("2026/11/22T10:00:00Z", "invalid date separator, expected `-`"),
    ],
    ["year", dt, " 2026-11-22T10:00:00Z", fromDate(" 2026-11-22T10:00:00Z", "invalid character in year")],
    ["boolean", dt, true, e("datetime_type", "Input should be a valid datetime", true)],
    ["null", dt, null, e("datetime_type", "Input should be a valid datetime", null)],
  ];
  it.each(rows)("%s", (_label, schema, input, expected) => check(schema, input, expected));
});

describe("refine", () => {
  const notSeven = s.int().refine((value) => value !== 7, "seven is not allowed");
  it("reports value_error with the raw input", () => {
    check(
      notSeven,
      "7",
      e("value_error", "Value error, seven is not allowed", "7", { error: "seven is not allowed" }),
    );
  });
  it("runs only after the value is valid", () => {
    check(
      notSeven,
      "x",
      e("int_parsing", "Input should be a valid integer, unable to parse string as an integer", "x"),
    );
  });
  it("reports the first failing check, with a message from the value", () => {
    const even = s
      .int()
      .refine(
        (v) => v % 2 === 0,
        (v) => `${v} is odd`,
      )
      .refine((v) => v > 10, "too small");
    check(even, 3, e("value_error", "Value error, 3 is odd", 3, { error: "3 is odd" }));
    check(even, 4, e("value_error", "Value error, too small", 4, { error: "too small" }));
    check(even, 12, ok(12));
  });
});
