import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runUnderFrequentCollections } from "../../testkit/src/hang-check.js";

const keys = fileURLToPath(new URL("../src/session-token-keys.ts", import.meta.url));

describe("session token keys", () => {
  // Node 20 deadlocks when a key straight from generateKeyPairSync is exported while a garbage collection
  // destroys its generation job: the process hangs for good, so the loop runs in a child with a time limit,
  // its young generation small so that collections come often (keys straight from generateKeyPairSync
  // hang within 4,000).
  it.each(["ES256", "EdDSA"])(
    "%s: new keys are exported while collections run, without hanging",
    (alg) => {
      const script = `
        import { newSessionTokenKeyPair } from ${JSON.stringify(keys)};
        const garbage = [];
        for (let i = 0; i < 6000; i++) {
          const { publicKey, privateKey } = newSessionTokenKeyPair(${JSON.stringify(alg)});
          JSON.stringify([publicKey.export({ format: "jwk" }), privateKey.export({ format: "jwk" })]);
          garbage.push(new Array(50).fill(i));
          if (garbage.length > 100) garbage.length = 0;
        }`;
      const run = runUnderFrequentCollections(script);
      expect(run.hung, "killed after 40 s: hung").toBe(false);
      expect(run.status, run.stderr).toBe(0);
    },
    60_000,
  );
});
