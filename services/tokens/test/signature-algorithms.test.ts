import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const algorithms = fileURLToPath(new URL("../src/signature-algorithms.ts", import.meta.url));

describe("signature algorithms", () => {
  // Node 20 deadlocks when a key straight from generateKeyPairSync is exported while a garbage collection
  // destroys its generation job: the process hangs for good, so the loop runs in a child with a time limit,
  // its young generation small so that collections come often (without the read-back it hangs within
  // 4,000 keys).
  it.each(["ES256", "EdDSA"])(
    "%s: new keys are exported while collections run, without hanging",
    (alg) => {
      const script = `
        import { signatureAlgorithm } from ${JSON.stringify(algorithms)};
        const algorithm = signatureAlgorithm(${JSON.stringify(alg)});
        const garbage = [];
        for (let i = 0; i < 6000; i++) {
          const { publicKey, privateKey } = algorithm.generate();
          JSON.stringify([publicKey.export({ format: "jwk" }), privateKey.export({ format: "jwk" })]);
          garbage.push(new Array(50).fill(i));
          if (garbage.length > 100) garbage.length = 0;
        }`;
      const run = spawnSync(
        process.execPath,
        ["--max-semi-space-size=1", "--import", "tsx", "--input-type=module", "-e", script],
        { timeout: 40_000, encoding: "utf8" },
      );
      expect(run.signal, "killed after 40 s: hung").toBeNull();
      expect(run.status, run.stderr).toBe(0);
    },
    60_000,
  );
});
