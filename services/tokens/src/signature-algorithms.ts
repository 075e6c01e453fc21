import { type KeyObject, sign } from "node:crypto";
import { newSessionTokenKeyPair, type SessionTokenAlg } from "@avatar/runtime";

/** How node:crypto makes the keys of one JWS algorithm (RFC 7518) and signs with them. */
export interface SignatureAlgorithm {
  /** A new key pair (newSessionTokenKeyPair: safe to export). */
  generate(): { publicKey: KeyObject; privateKey: KeyObject };
  /** The JWS signature of `input`. */
  sign(input: Buffer, key: KeyObject): Buffer;
}

const ALGORITHMS: Record<SessionTokenAlg, SignatureAlgorithm> = {
  ES256: {
    generate: () => newSessionTokenKeyPair("ES256"),
    // JWS wants r || s (64 bytes), not the DER sequence node:crypto gives by default.
    sign: (input, key) => sign("sha256", input, { key, dsaEncoding: "ieee-p1363" }),
  },
  EdDSA: {
    generate: () => newSessionTokenKeyPair("EdDSA"),
    sign: (input, key) => sign(null, input, key),
  },
};

/** The algorithm a signing key's `alg` names; throws for one the verifiers do not accept. */
export function signatureAlgorithm(alg: string): SignatureAlgorithm {
  const found = Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg as SessionTokenAlg] : undefined;
  if (!found) throw new Error(`signing key algorithm ${alg} is not one session tokens may have`);
  return found;
}
