import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import type { SessionTokenAlg } from "./session-token.js";

/**
 * A new key pair for session tokens, made as DER and read back: KeyObjects that no key generation job
 * shares. Node 20 deadlocks when a key straight from generateKeyPairSync is exported while a garbage
 * collection destroys its generation job (the job's destructor takes the lock the export holds while it
 * allocates): a tokens test hung forever in CI, and a loop of generate + export hangs here within 4,000
 * keys of either algorithm (120,000 read back did not). Make every key pair that will be exported here.
 */
export function newSessionTokenKeyPair(alg: SessionTokenAlg): {
  publicKey: KeyObject;
  privateKey: KeyObject;
} {
  const publicKeyEncoding = { type: "spki", format: "der" } as const;
  const privateKeyEncoding = { type: "pkcs8", format: "der" } as const;
  const der =
    alg === "ES256"
      ? generateKeyPairSync("ec", { namedCurve: "P-256", publicKeyEncoding, privateKeyEncoding })
      : generateKeyPairSync("ed25519", { publicKeyEncoding, privateKeyEncoding });
  return {
    publicKey: createPublicKey({ key: der.publicKey, format: "der", type: "spki" }),
    privateKey: createPrivateKey({ key: der.privateKey, format: "der", type: "pkcs8" }),
  };
}
