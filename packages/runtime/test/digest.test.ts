import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/digest.js";

describe("sha256Hex", () => {
  it("is SHA-256 in hex, of the text's UTF-8", () => {
    // FIPS 180-2's example.
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (const text of ["", "lak_Zm9v", "größe ✓ 🎉"]) {
      expect(sha256Hex(text)).toBe(createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"));
    }
  });
});
