import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeMsgpack, encodeMsgpack, MsgpackError, type MsgpackValue } from "../src/encoding/msgpack.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const fromHex = (text: string) => new Uint8Array(Buffer.from(text.replace(/\s/g, ""), "hex"));

/** Any value of the subset, with integers across every width and strings/binaries across every size class. */
const value = fc.letrec<{ any: MsgpackValue }>((tie) => ({
  any: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true }),
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ minLength: 250, maxLength: 70_000 }),
    fc.uint8Array({ maxLength: 300 }),
    fc.array(tie("any"), { maxLength: 20 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie("any"), { maxKeys: 20 }),
  ),
})).any;

describe("MessagePack round trips", () => {
  it("decodes what it encodes, for any value of the subset", () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(decodeMsgpack(encodeMsgpack(v))).toEqual(v);
      }),
      { numRuns: 300 },
    );
  });

  it("keeps -0, NaN and infinities as floats", () => {
    for (const v of [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1, 2 ** 53]) {
      expect(Object.is(decodeMsgpack(encodeMsgpack(v)), v)).toBe(true);
    }
    expect(hex(encodeMsgpack(-0))).toBe("cb8000000000000000");
  });

  it("round-trips 64-bit integers beyond the safe range as bigint", () => {
    for (const v of [2n ** 64n - 1n, 2n ** 53n, -(2n ** 63n), -(2n ** 53n) - 1n])
      expect(decodeMsgpack(encodeMsgpack(v))).toBe(v);
    expect(decodeMsgpack(encodeMsgpack(2n ** 40n))).toBe(2 ** 40);
  });

  it("keeps a __proto__ key an ordinary entry", () => {
    const decoded = decodeMsgpack(fromHex("81 a9 5f5f70726f746f5f5f 01")) as Record<string, unknown>;
    expect(Object.keys(decoded)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(decodeMsgpack(encodeMsgpack(decoded))).toEqual(decoded);
  });

  it("decodes binary out of a Buffer into a plain copy", () => {
    const input = Buffer.from(encodeMsgpack(new Uint8Array([1, 2, 3])));
    const decoded = decodeMsgpack(input) as Uint8Array;
    input.fill(0);
    expect(Buffer.isBuffer(decoded)).toBe(false);
    expect(decoded).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("leaves out map entries whose value is undefined", () => {
    expect(decodeMsgpack(encodeMsgpack({ a: 1, b: undefined }))).toEqual({ a: 1 });
  });
});

describe("MessagePack wire format", () => {
  it.each([
    [0, "00"],
    [127, "7f"],
    [128, "cc80"],
    [255, "ccff"],
    [256, "cd0100"],
    [65_535, "cdffff"],
    [65_536, "ce00010000"],
    [2 ** 32 - 1, "ceffffffff"],
    [2 ** 32, "cf0000000100000000"],
    [-1, "ff"],
    [-32, "e0"],
    [-33, "d0df"],
    [-128, "d080"],
    [-129, "d1ff7f"],
    [-32_768, "d18000"],
    [-32_769, "d2ffff7fff"],
    [-(2 ** 31), "d280000000"],
    [-(2 ** 31) - 1, "d3ffffffff7fffffff"],
    [1.5, "cb3ff8000000000000"],
  ])("writes %d in its shortest form %s", (v, expected) => {
    expect(hex(encodeMsgpack(v))).toBe(expected);
    expect(decodeMsgpack(fromHex(expected))).toBe(v);
  });

  it("writes the specification's example map", () => {
    expect(hex(encodeMsgpack({ compact: true, schema: 0 }))).toBe("82a7636f6d70616374c3a6736368656d6100");
  });

  it.each([
    [31, "bf"],
    [32, "d920"],
    [255, "d9ff"],
    [256, "da0100"],
    [65_535, "daffff"],
    [65_536, "db00010000"],
  ])("picks the string header for %d bytes", (length, header) => {
    const encoded = encodeMsgpack("x".repeat(length));
    expect(hex(encoded.subarray(0, header.length / 2))).toBe(header);
    expect(encoded.length).toBe(header.length / 2 + length);
  });

  it.each([
    [0, "c400"],
    [255, "c4ff"],
    [256, "c50100"],
    [65_536, "c600010000"],
  ])("picks the binary header for %d bytes", (length, header) => {
    expect(hex(encodeMsgpack(new Uint8Array(length)).subarray(0, header.length / 2))).toBe(header);
  });

  it.each([
    [15, "9f", "8f"],
    [16, "dc0010", "de0010"],
    [65_536, "dd00010000", "df00010000"],
  ])("picks the array and map headers for %d entries", (count, arrayHeader, mapHeader) => {
    const array = encodeMsgpack(new Array(count).fill(0));
    expect(hex(array.subarray(0, arrayHeader.length / 2))).toBe(arrayHeader);
    const map = encodeMsgpack(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 0])));
    expect(hex(map.subarray(0, mapHeader.length / 2))).toBe(mapHeader);
  });

  it("counts string lengths in UTF-8 bytes", () => {
    expect(hex(encodeMsgpack("é€😀"))).toBe("a9c3a9e282acf09f9880");
  });

  it("reads float32, which it never writes", () => {
    expect(decodeMsgpack(fromHex("ca3fc00000"))).toBe(1.5);
  });

  it("encodes the live synthesis events as the vendor's decoder expects", () => {
    expect(hex(encodeMsgpack({ event: "flush" }))).toBe("81a56576656e74a5666c757368");
    expect(decodeMsgpack(fromHex("82 a5 6576656e74 a5 617564696f a5 617564696f c4 03 010203"))).toEqual({
      event: "audio",
      audio: new Uint8Array([1, 2, 3]),
    });
  });
});

describe("MessagePack refusals", () => {
  it.each([
    ["truncated data", "cd01"],
    ["a string longer than the data", "a5616263"],
    ["an array count the data cannot hold", "dd7fffffff"],
    ["a map count the data cannot hold", "df7fffffff"],
    ["the never-used byte", "c1"],
    ["an extension type", "d40102"],
    ["a timestamp extension", "d6ff00000000"],
    ["a non-string map key", "810101"],
    ["invalid UTF-8", "a2c328"],
    ["trailing bytes", "0000"],
    ["nothing at all", ""],
  ])("refuses %s", (_name, bytes) => {
    expect(() => decodeMsgpack(fromHex(bytes))).toThrow(MsgpackError);
  });

  it("refuses nesting deeper than its limit both ways", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => encodeMsgpack(deep)).toThrow(MsgpackError);
    expect(() => decodeMsgpack(new Uint8Array([...new Array(100).fill(0x91), 0x01]))).toThrow(MsgpackError);
  });

  it("refuses values outside the subset", () => {
    expect(() => encodeMsgpack(() => 1)).toThrow(MsgpackError);
    expect(() => encodeMsgpack(Symbol("s"))).toThrow(MsgpackError);
    expect(() => encodeMsgpack(2n ** 64n)).toThrow(MsgpackError);
  });
});
