import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { SessionTokenAlg } from "@avatar/runtime";

/** How node:crypto makes the keys of one JWS algorithm (RFC 7518) and signs with them. */
export interface SignatureAlgorithm {
  generate(): { publicKey: KeyObject; privateKey: KeyObject };
  /** The JWS signature of `input`. */
  sign(input: Buffer, key: KeyObject): Buffer;
}

/**
 * A new key pair made as DER and read back: KeyObjects that no key generation job shares. Node 20
 * deadlocks when a key straight from generateKeyPairSync is exported while a garbage collection
 * destroys its generation job (the job's destructor takes the lock the export holds while it
 * allocates): a tokens test hung forever in CI, and a loop of generate + export hangs here within 4,000
 * keys of either algorithm (200,000 read back do not).
 */
function readBack(pair: { publicKey: Buffer; privateKey: Buffer }) {
  return {
    publicKey: createPublicKey({ key: pair.publicKey, format: "der", type: "spki" }),
    privateKey: createPrivateKey({ key: pair.privateKey, format: "der", type: "pkcs8" }),
  };
}

const ALGORITHMS: Record<SessionTokenAlg, SignatureAlgorithm> = {
  ES256: {
    generate: () =>
      readBack(
        generateKeyPairSync("ec", {
          namedCurve: "P-256",
          publicKeyEncoding: { type: "spki", format: "der" },
          privateKeyEncoding: { type: "pkcs8", format: "der" },
        }),
      ),
    // JWS wants r || s (64 bytes), not the DER sequence node:crypto gives by default.
    sign: (input, key) => sign("sha256", input, { key, dsaEncoding: "ieee-p1363" }),
  },
  EdDSA: {
    generate: () =>
      readBack(
        generateKeyPairSync("ed25519", {
          publicKeyEncoding: { type: "spki", format: "der" },
          privateKeyEncoding: { type: "pkcs8", format: "der" },
        }),
      ),
    sign: (input, key) => sign(null, input, key),
  },
};

/** The algorithm a signing key's `alg` names; throws for one the verifiers do not accept. */
export function signatureAlgorithm(alg: string): SignatureAlgorithm {
  const found = Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg as SessionTokenAlg] : undefined;
  if (!found) throw new Error(`signing key algorithm ${alg} is not one session tokens may have`);
  return found;
}
