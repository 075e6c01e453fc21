import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): every request carries
 * `webhook-id` (the message id, the same on every retry), `webhook-timestamp` (Unix seconds of this
 * attempt) and `webhook-signature`: `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")), where
 * the key is the base64 part of the endpoint's secret `whsec_<base64>`.
 */

const SECRET_PREFIX = "whsec_";

/** A new signing secret: 32 random bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new Error("the signing secret is empty");
  return key;
}

/** The `webhook-signature` value of one attempt. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The three headers of one attempt. */
export function signedHeaders(secret: string, id: string, timestamp: number, body: string) {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": sign(secret, id, timestamp, body),
  };
}

export interface Verification {
  ok: boolean;
  /** Why not, when not. */
  problem?: string;
}

/**
 * What a receiver does: the signature must match one of the space-separated `v1,` signatures of the
 * header, and the timestamp must be within `toleranceSeconds` of `nowSeconds` (replays are refused).
 */
export function verify(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  options: { nowSeconds: number; toleranceSeconds?: number },
): Verification {
  const timestamp = Number(headers.timestamp);
  if (!/^\d+$/.test(headers.timestamp) || !Number.isSafeInteger(timestamp)) {
    return { ok: false, problem: "webhook-timestamp is not a number of seconds" };
  }
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(options.nowSeconds - timestamp) > tolerance) {
    return { ok: false, problem: `webhook-timestamp is more than ${tolerance} s away from now` };
  }
  let expected: Buffer;
  try {
    expected = Buffer.from(sign(secret, headers.id, timestamp, body));
  } catch (err) {
    return { ok: false, problem: (err as Error).message };
  }
  const matches = headers.signature
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .some((candidate) => {
      const given = Buffer.from(candidate);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  return matches ? { ok: true } : { ok: false, problem: "no signature matches" };
}
