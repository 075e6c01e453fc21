/**
 * Body decoding: the json_invalid entry carries CPython's json message and character offset (3.13
 * wording for trailing commas), an empty or null body is `missing`.
 */
import { describe, expect, it } from "vitest";
import * as s from "../src/schema/index.js";

const jsonInvalid = (position: number, error: string): s.ValidationIssue => ({
  type: "json_invalid",
  loc: ["body", position],
  msg: "JSON decode error",
  input: {},
  ctx: { error },
});
const missingBody: s.ValidationIssue = { type: "missing", loc: ["body"], msg: "Field required", input: null };

describe("parseJsonBody", () => {
  // Positions and messages as CPython's json.loads reports them.
  it.each([
    [" ", 1, "Expecting value"],
    ["{", 1, "Expecting property name enclosed in double quotes"],
    ['{"a"', 4, "Expecting ':' delimiter"],
    ['{"a" 1}', 5, "Expecting ':' delimiter"],
    ['{"a":', 5, "Expecting value"],
    ['{"a":1', 6, "Expecting ',' delimiter"],
    ['{"a":1,', 7, "Expecting property name enclosed in double quotes"],
    ['{"a":1,}', 6, "Illegal trailing comma before end of object"],
    ['{"spam":42 , }', 11, "Illegal trailing comma before end of object"],
    ["[123  , ]", 6, "Illegal trailing comma before end of array"],
    ["[1 2]", 3, "Expecting ',' delimiter"],
    ["[1,,2]", 3, "Expecting value"],
    ["{1:2}", 1, "Expecting property name enclosed in double quotes"],
    ["tru", 0, "Expecting value"],
    ["[tru]", 1, "Expecting value"],
    ["-", 0, "Expecting value"],
    ["01", 1, "Extra data"],
    ["1.", 1, "Extra data"],
    ["1e", 1, "Extra data"],
    ["{} x", 3, "Extra data"],
    ['"abc', 0, "Unterminated string starting at"],
    ['{"a": "x', 6, "Unterminated string starting at"],
    ['"a\\qb"', 2, "Invalid \\escape"],
    ['"\\u12"', 2, "Invalid \\uXXXX escape"],
    ['"\\ud83d\\u12"', 8, "Invalid \\uXXXX escape"],
    ['"a\tb"', 2, "Invalid control character at"],
    ["NaN", 0, "Expecting value"],
    ['["😀" x]', 5, "Expecting ',' delimiter"],
    ['"\\uD83D\\uDE00" x', 15, "Extra data"],
  ])("%j fails at %i: %s", (text, position, error) => {
    expect(s.parseJsonBody(text)).toEqual({
      ok: false,
      reason: "syntax",
      issues: [jsonInvalid(position, error)],
    });
  });

  it("counts positions in characters for a byte body too", () => {
    expect(s.parseJsonBody(Buffer.from('{"é😀": 1,}'))).toMatchObject({
      issues: [jsonInvalid(8, "Illegal trailing comma before end of object")],
    });
  });

  it.each([[""], [Buffer.alloc(0)], [undefined], [null]])("an empty body (%j) is a missing body", (raw) => {
    expect(s.parseJsonBody(raw)).toEqual({ ok: false, reason: "empty", issues: [missingBody] });
  });

  it("decodes values like JSON.parse, duplicate keys keeping the last value", () => {
    const text =
      '{"a": [1, -2.5e3, "x\\u00e9\\ud83d\\ude00\\n"], "b": {"c": null, "d": true}, "a2": false, "a2": 0}';
    expect(s.parseJsonBody(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it("skips a UTF-8 byte order mark", () => {
    expect(s.parseJsonBody(Buffer.from('\ufeff{"a":1}'))).toEqual({ ok: true, value: { a: 1 } });
    expect(s.parseJsonBody('\ufeff{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it("bytes that are not UTF-8 are json_invalid with Python's decode message", () => {
    expect(s.parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({
      ok: false,
      reason: "encoding",
      issues: [jsonInvalid(1, "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte")],
    });
    expect(s.parseJsonBody(Buffer.from([0x22, 0xe2, 0x82, 0x28, 0x22]))).toMatchObject({
      issues: [
        { ctx: { error: "'utf-8' codec can't decode bytes in position 1-2: invalid continuation byte" } },
      ],
    });
    expect(s.parseJsonBody(Buffer.from([0x22, 0xc3]))).toMatchObject({
      issues: [
        { ctx: { error: "'utf-8' codec can't decode byte 0xc3 in position 1: unexpected end of data" } },
      ],
    });
  });

  it("nesting deeper than the limit fails without throwing", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const result = s.parseJsonBody(deep);
    expect(result).toMatchObject({
      ok: false,
      reason: "depth",
      issues: [{ type: "json_invalid", loc: ["body", 1000] }],
    });
    expect(s.parseJsonBody(`${"[".repeat(1000)}${"]".repeat(1000)}`).ok).toBe(true);
    // Long enough to be read by the scanner rather than JSON.parse, at the limit and past it.
    const padded = (depth: number) => `${"[".repeat(depth)}${" ".repeat(50)}${"]".repeat(depth)}`;
    expect(s.parseJsonBody(padded(1000)).ok).toBe(true);
    expect(s.parseJsonBody(padded(1001))).toMatchObject({ ok: false, reason: "depth" });
  });
});

describe("parseBody", () => {
  const Body = s.object("Body", { name: s.string() });

  it("validates at ['body', ...]", () => {
    expect(s.parseBody(Body, '{"name": 5}')).toEqual({
      ok: false,
      issues: [
        { type: "string_type", loc: ["body", "name"], msg: "Input should be a valid string", input: 5 },
      ],
    });
    expect(s.parseBody(Body, '{"name": "x", "other": 1}')).toEqual({ ok: true, value: { name: "x" } });
  });

  it.each([[""], ["null"]])("%j is a missing body, as FastAPI treats an absent or null body", (raw) => {
    expect(s.parseBody(Body, raw)).toEqual({ ok: false, issues: [missingBody] });
  });

  it("passes json_invalid through", () => {
    expect(s.parseBody(Body, "{")).toEqual({
      ok: false,
      issues: [jsonInvalid(1, "Expecting property name enclosed in double quotes")],
    });
  });
});

describe("validationErrorBody", () => {
  it("keys entries in FastAPI's order and leaves out an absent ctx", () => {
    const body = s.validationErrorBody([
      {
        ctx: { ge: 1 },
        input: 0,
        msg: "Input should be greater than or equal to 1",
        loc: ["query", "page"],
        type: "greater_than_equal",
      },
      { input: null, msg: "Field required", loc: ["body"], type: "missing" },
    ]);
    expect(JSON.stringify(body)).toBe(
      '{"detail":[{"type":"greater_than_equal","loc":["query","page"],"msg":"Input should be greater than or equal to 1","input":0,"ctx":{"ge":1}},' +
        '{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}',
    );
  });
});
