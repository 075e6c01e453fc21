/** Properties over arbitrary input: parsing never throws and every issue is a well-formed 422 entry. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as s from "../src/schema/index.js";
import { scanJson } from "../src/schema/json-decode.js";

const VendorA = s.object("VendorA", {
  provider: s.literal("vendorA").default("vendorA"),
  speed: s.number({ ge: 0.8, le: 1.2 }).default(1),
});
const VendorD = s.object("VendorD", {
  provider: s.literal("vendorD").default("vendorD"),
  model: s.enumOf(["sonic-3", "sonic-2"]).default("sonic-3"),
});
const Link = s.object("Link", { href: s.httpUrl(), title: s.string({ maxLength: 10 }).optional() });
const Body = s.object("Body", {
  mode: s.literal("FULL").default("FULL"),
  avatar_id: s.uuid(),
  is_sandbox: s.boolean().default(false),
  max_session_duration: s.int({ ge: 1 }).optional(),
  name: s.string({ minLength: 1, maxLength: 64 }),
  voice_settings: s
    .discriminatedUnion("provider", { vendorA: VendorA, vendorD: VendorD })
    .nullable()
    .optional(),
  dynamic_variables: s.record(s.string({ maxLength: 1000 }), { maxEntries: 3, keyMaxLength: 8 }).optional(),
  vars: s.record(s.union([s.string(), s.int(), s.number(), s.boolean()])).optional(),
  links: s.array(Link, { maxItems: 3 }).optional(),
  created_after: s.datetime().optional(),
  count: s
    .int()
    .refine((v) => v !== 7, "no sevens")
    .optional(),
});

function expectWellFormed(result: s.ParseResult<unknown>) {
  if (result.ok) return;
  expect(result.issues.length).toBeGreaterThan(0);
  for (const entry of result.issues) {
    expect(typeof entry.type).toBe("string");
    expect(entry.type.length).toBeGreaterThan(0);
    expect(typeof entry.msg).toBe("string");
    expect(Array.isArray(entry.loc)).toBe(true);
    expect(entry.loc[0]).toBe("body");
    expect(entry.loc.every((part) => typeof part === "string" || typeof part === "number")).toBe(true);
    expect(Object.hasOwn(entry, "input")).toBe(true);
    if (entry.ctx !== undefined) expect(typeof entry.ctx).toBe("object");
  }
}

const fieldNames = [...Object.keys(Body.shape), "extra", "__proto__"];
const nearlyValidBody = fc
  .dictionary(fc.constantFrom(...fieldNames), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
  .map((overrides) => ({ avatar_id: "123e4567-e89b-12d3-a456-426614174000", name: "n", ...overrides }));

describe("properties", () => {
  it("any JSON value: parse never throws and issues are well formed", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => {
        expectWellFormed(Body.parse(input));
      }),
      { numRuns: 500 },
    );
  });

  it("a body with arbitrary field values: parse never throws and issues are well formed", () => {
    fc.assert(
      fc.property(nearlyValidBody, (input) => {
        expectWellFormed(Body.parse(input));
      }),
      { numRuns: 1000 },
    );
  });

  it("any text as a body: never throws, always answers at loc 'body'", () => {
    const text = fc.oneof(
      fc.json(),
      fc.string({ unit: fc.constantFrom(...'{}[],:"\\ u0123456789.eE-+tfnrl\n'.split("")) }),
    );
    fc.assert(
      fc.property(text, (raw) => {
        expectWellFormed(s.parseBody(Body, raw));
      }),
      { numRuns: 1000 },
    );
  });

  it("any bytes as a body: never throws, and only bytes that are not UTF-8 are refused for their encoding", () => {
    const strict = new TextDecoder("utf-8", { fatal: true });
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      // Mostly valid JSON text with a byte changed: near misses of every UTF-8 rule.
      fc.tuple(fc.json(), fc.nat(), fc.integer({ min: 0x80, max: 0xff })).map(([text, at, byte]) => {
        const b = new TextEncoder().encode(text);
        if (b.length > 0) b[at % b.length] = byte;
        return b;
      }),
    );
    fc.assert(
      fc.property(bytes, (raw) => {
        const result = s.parseJsonBody(raw);
        let utf8 = true;
        try {
          strict.decode(raw);
        } catch {
          utf8 = false;
        }
        expect(!result.ok && result.reason === "encoding").toBe(!utf8);
      }),
      { numRuns: 3000 },
    );
  });

  const jsonLikeText = fc.oneof(
    fc.json(),
    fc.string({ unit: fc.constantFrom(...'{}[],:"\\ u0123456789abcdef.eE-+tfnrl\t\n'.split("")) }),
    fc.string({ unit: "grapheme" }),
  );

  // decodeJson leaves short documents to JSON.parse on the strength of this property.
  it("the scanner accepts exactly what JSON.parse accepts, with the same value", () => {
    fc.assert(
      fc.property(jsonLikeText, (raw) => {
        let expected: { ok: true; value: unknown } | { ok: false };
        try {
          expected = { ok: true, value: JSON.parse(raw) };
        } catch {
          expected = { ok: false };
        }
        const decoded = scanJson(raw);
        expect(decoded.ok).toBe(expected.ok);
        if (decoded.ok && expected.ok) expect(decoded.value).toEqual(expected.value);
        if (!decoded.ok) expect(decoded.position).toBeLessThanOrEqual([...raw].length);
      }),
      { numRuns: 2000 },
    );
  });

  it("the decoder answers what the scanner does, failures and their positions included", () => {
    fc.assert(
      fc.property(jsonLikeText, (raw) => {
        expect(s.decodeJson(raw)).toEqual(scanJson(raw));
      }),
      { numRuns: 2000 },
    );
  });
});
