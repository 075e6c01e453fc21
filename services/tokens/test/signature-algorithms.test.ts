import { verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signatureAlgorithm } from "../src/signature-algorithms.js";

describe("signature algorithms", () => {
  const input = Buffer.from("header.payload");

  it("ES256 signs r || s, 64 bytes, that the public key verifies over the same input only", () => {
    const es256 = signatureAlgorithm("ES256");
    const { publicKey, privateKey } = es256.generate();
    const signature = es256.sign(input, privateKey);
    const key = { key: publicKey, dsaEncoding: "ieee-p1363" } as const;
    expect(signature).toHaveLength(64);
    expect(verify("sha256", input, key, signature)).toBe(true);
    expect(verify("sha256", Buffer.from("header.other"), key, signature)).toBe(false);
  });

  it("EdDSA signs what the public key verifies", () => {
    const eddsa = signatureAlgorithm("EdDSA");
    const { publicKey, privateKey } = eddsa.generate();
    expect(verify(null, input, publicKey, eddsa.sign(input, privateKey))).toBe(true);
  });

  it("refuses an algorithm session tokens may not have, and names it", () => {
    expect(() => signatureAlgorithm("HS256")).toThrow(/HS256/);
    expect(() => signatureAlgorithm("toString")).toThrow(/toString/);
  });
});
