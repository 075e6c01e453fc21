import { createECDH, hash, type KeyObject } from "node:crypto";

/**
 * ECDSA on P-256 (FIPS 186-5) split in two: what does not depend on the message, done ahead in a worker
 * thread, and the little that does, done per token. A signature is (r, s) with r the x of k·G (mod n)
 * and s = k⁻¹·(z + r·d) mod n, z the SHA-256 of the message and d the private key. Everything but z can
 * be made before the message exists: a presignature is r, u = k⁻¹ and v = k⁻¹·r·d, and the signature
 * is then s = u·z + v. The point multiplication k·G is OpenSSL's (an ECDH key pair: k is its private
 * key, k·G its public one), so the nonce comes from OpenSSL's generator as in crypto.sign.
 *
 * A presignature is as secret as the key (with u and v, d = v·u⁻¹·r⁻¹) and is used once: two
 * signatures with one k give the key away.
 */

/** The order of P-256's base point. */
export const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const n = P256_ORDER;

export interface Presignature {
  /** r as the 64 hex digits it is written with. */
  rHex: string;
  /** k⁻¹ mod n. */
  u: bigint;
  /** k⁻¹·r·d mod n. */
  v: bigint;
}

const fromBytes = (bytes: Uint8Array): bigint => BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
const hex64 = (x: bigint): string => x.toString(16).padStart(64, "0");

/** The private scalar d of a P-256 private key. */
export function privateScalar(key: KeyObject): bigint {
  const { crv, d } = key.export({ format: "jwk" });
  if (crv !== "P-256" || !d) throw new Error("presignatures need a P-256 private key");
  return fromBytes(Buffer.from(d, "base64url"));
}

/** a⁻¹ mod n (n prime, 0 < a < n), by the extended Euclidean algorithm. */
function inverse(a: bigint): bigint {
  let [r0, r1] = [a, n];
  let [s0, s1] = [1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return ((s0 % n) + n) % n;
}

/**
 * `count` presignatures for the private scalar d. The nonces' inverses are taken together (Montgomery's
 * trick: one inversion and three multiplications each), since an inversion costs as much as tens of
 * multiplications.
 */
export function presignatures(d: bigint, count: number): Presignature[] {
  const ecdh = createECDH("prime256v1");
  const ks: bigint[] = [];
  const rs: bigint[] = [];
  while (ks.length < count) {
    ecdh.generateKeys();
    const k = fromBytes(ecdh.getPrivateKey());
    // The public key is 0x04 || x || y.
    const r = fromBytes(ecdh.getPublicKey().subarray(1, 33)) % n;
    if (k === 0n || r === 0n) continue;
    ks.push(k);
    rs.push(r);
  }
  const prefix: bigint[] = new Array(count);
  let product = 1n;
  for (let i = 0; i < count; i++) {
    prefix[i] = product;
    product = (product * (ks[i] as bigint)) % n;
  }
  let inverseOfRest = inverse(product);
  const out: Presignature[] = new Array(count);
  for (let i = count - 1; i >= 0; i--) {
    const k = ks[i] as bigint;
    const r = rs[i] as bigint;
    const u = (inverseOfRest * (prefix[i] as bigint)) % n;
    inverseOfRest = (inverseOfRest * k) % n;
    out[i] = { rHex: hex64(r), u, v: (((u * r) % n) * d) % n };
  }
  return out;
}

/**
 * The ES256 signature of `input` (r || s, 64 bytes, as JWS writes it) made with presignature `p`; undefined
 * in the one case (s = 0, probability 2⁻²⁵⁶) where ECDSA takes another nonce instead.
 */
export function signPresigned(p: Presignature, input: Uint8Array): Buffer | undefined {
  const z = BigInt(`0x${hash("sha256", input, "hex")}`);
  const s = (p.u * z + p.v) % n;
  if (s === 0n) return undefined;
  return Buffer.from(p.rHex + hex64(s), "hex");
}
