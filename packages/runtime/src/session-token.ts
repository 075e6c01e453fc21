import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";

/**
 * The session token: a JWT signed by the tokens service with an asymmetric key named by `kid`, so any
 * gateway replica verifies it with the public keys alone and keys can rotate.
 */

export const SESSION_TOKEN_ISSUER = "avatar-tokens";
export const SESSION_TOKEN_AUDIENCE = "avatar-session";
/**
 * What a session token may be signed with. New keys are ES256 (ECDSA on P-256): with Node 20's OpenSSL 3.0
 * it signs in about two thirds of Ed25519's time, once a mint (`pnpm bench:signatures`). EdDSA (Ed25519)
 * is what keys made before 2026-11-27 have; they sign until they are rotated.
 */
export const SESSION_TOKEN_ALGS = ["ES256", "EdDSA"] as const;
export type SessionTokenAlg = (typeof SESSION_TOKEN_ALGS)[number];
/** The algorithm of new signing keys. */
export const SESSION_TOKEN_ALG: SessionTokenAlg = "ES256";

/** The non-sensitive session configuration every token carries. */
export interface StartSessionData {
  mode: "FULL" | "LITE";
  avatar_id: string;
  is_sandbox: boolean;
  video_settings: { quality: string; encoding: string };
  interactivity_type: string;
  agent_type: string | null;
  /** Sandbox tokens only: the resolved configuration (never secret values). */
  resolved?: Record<string, unknown>;
}

export interface SessionTokenClaims extends JWTPayload {
  sub: string;
  space_id: string;
  api_key_id: string;
  exp: number;
  start_session_data: StartSessionData;
}

export class InvalidSessionTokenError extends Error {
  constructor(
    message: string,
    readonly unknownKey = false,
  ) {
    super(message);
    this.name = "InvalidSessionTokenError";
  }
}

/** One jose key set per key set object: it imports each key once, not on every verification. */
const localKeySets = new WeakMap<JSONWebKeySet, ReturnType<typeof createLocalJWKSet>>();

function localKeySet(keys: JSONWebKeySet): ReturnType<typeof createLocalJWKSet> {
  let set = localKeySets.get(keys);
  if (!set) {
    set = createLocalJWKSet(keys);
    localKeySets.set(keys, set);
  }
  return set;
}

/**
 * Verifies signature, issuer, audience and expiry against a key set; throws InvalidSessionTokenError.
 * `now` is the caller's clock, the one its tokens are minted on (no default: a verifier on the machine's
 * clock beside a minter on an injected one is how a token expires in a test but not in production).
 */
export async function verifySessionToken(
  token: string,
  keys: JSONWebKeySet,
  now: Date,
): Promise<SessionTokenClaims> {
  try {
    const { payload } = await jwtVerify(token, localKeySet(keys), {
      issuer: SESSION_TOKEN_ISSUER,
      audience: SESSION_TOKEN_AUDIENCE,
      algorithms: [...SESSION_TOKEN_ALGS],
      // jose checks `exp` only when present; a session token without one would never expire.
      requiredClaims: ["exp"],
      currentDate: now,
    });
    if (
      typeof payload.sub !== "string" ||
      typeof payload.space_id !== "string" ||
      !payload.start_session_data
    ) {
      throw new InvalidSessionTokenError("session token lacks its claims");
    }
    return payload as SessionTokenClaims;
  } catch (err) {
    if (err instanceof InvalidSessionTokenError) throw err;
    if (err instanceof errors.JWKSNoMatchingKey)
      throw new InvalidSessionTokenError("unknown signing key", true);
    throw new InvalidSessionTokenError(err instanceof Error ? err.message : "invalid session token");
  }
}
