import { verify } from "node:crypto";
import { fileURLToPath } from "node:url";
import { runUnderFrequentCollections } from "@avatar/testkit";
import { describe, expect, it } from "vitest";
import { signatureAlgorithm } from "../src/signature-algorithms.js";

const algorithms = fileURLToPath(new URL("../src/signature-algorithms.ts", import.meta.url));

describe("signature algorithms", () => {
  const input = Buffer.from("header.payload");

  it("ES256 signs r || s, 64 bytes, that the public key verifies over the same input only", async () => {
    const es256 = signatureAlgorithm("ES256");
    const { publicKey, privateKey } = es256.generate();
    const signature = await es256.sign(input, privateKey);
    const key = { key: publicKey, dsaEncoding: "ieee-p1363" } as const;
    expect(signature).toHaveLength(64);
    expect(verify("sha256", input, key, signature)).toBe(true);
    expect(verify("sha256", Buffer.from("header.other"), key, signature)).toBe(false);
  });

  it("EdDSA signs what the public key verifies", async () => {
    const eddsa = signatureAlgorithm("EdDSA");
    const { publicKey, privateKey } = eddsa.generate();
    expect(verify(null, input, publicKey, await eddsa.sign(input, privateKey))).toBe(true);
  });

  it("refuses an algorithm session tokens may not have, and names it", () => {
    expect(() => signatureAlgorithm("HS256")).toThrow(/HS256/);
    expect(() => signatureAlgorithm("toString")).toThrow(/toString/);
  });

  // Signing happens in the thread pool, each signature a job that a garbage collection destroys later.
  // A job destroyed while its key was in use is how Node 20's key generation deadlocked (runtime's
  // session-token-keys.ts); this runs many signatures, with the key exported between them, in a child
  // with a small young generation and a time limit, so that a hang fails instead of stopping CI.
  it.each(["ES256", "EdDSA"])(
    "%s: thousands of signatures in flight while collections run, without hanging",
    (alg) => {
      const script = `
        import { signatureAlgorithm } from ${JSON.stringify(algorithms)};
        const algorithm = signatureAlgorithm(${JSON.stringify(alg)});
        const { privateKey } = algorithm.generate();
        let garbage = [];
        for (let round = 0; round < 2000; round++) {
          await Promise.all(Array.from({ length: 32 }, (_, k) => algorithm.sign(Buffer.from("input " + k), privateKey)));
          JSON.stringify(privateKey.export({ format: "jwk" }));
          garbage.push(new Array(50).fill(round));
          if (garbage.length > 100) garbage = [];
        }`;
      const run = runUnderFrequentCollections(script);
      expect(run.hung, "killed after 40 s: hung").toBe(false);
      expect(run.status, run.stderr).toBe(0);
    },
    60_000,
  );
});
