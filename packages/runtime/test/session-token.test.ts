import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { type JWK, SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  InvalidSessionTokenError,
  SESSION_TOKEN_AUDIENCE,
  SESSION_TOKEN_ISSUER,
  type StartSessionData,
  verifySessionToken,
} from "../src/session-token.js";
import { newSessionTokenKeyPair } from "../src/session-token-keys.js";

/**
 * Keys and tokens made the way the tokens service makes them (ES256, or EdDSA for keys made before it;
 * `kid` in the header, iss/aud set); the tokens service's own tests verify its signer's tokens with this
 * function too.
 */
interface TestKey {
  kid: string;
  alg: string;
  privateKey: KeyObject;
  jwk: JWK;
}

function newKey(kid: string, alg: "ES256" | "EdDSA" | "RS256" = "ES256"): TestKey {
  const { publicKey, privateKey } =
    alg === "RS256" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : newSessionTokenKeyPair(alg);
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg } };
}

const startSessionData: StartSessionData = {
  mode: "FULL",
  avatar_id: "0b0c9f7e-4b8e-4f25-9a43-6f1f3a0f2a11",
  is_sandbox: false,
  video_settings: { quality: "high", encoding: "H264" },
  interactivity_type: "CONVERSATIONAL",
  agent_type: null,
};

const NOW = new Date("2026-11-22T10:00:00Z");
const nowSeconds = Math.floor(NOW.getTime() / 1000);

interface TokenOptions {
  claims?: Record<string, unknown>;
  issuer?: string;
  audience?: string;
  exp?: number | null;
  kid?: string;
}

function sign(key: TestKey, options: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT({
    sub: "session-1",
    space_id: "space-1",
    api_key_id: "key-1",
    start_session_data: startSessionData,
    ...options.claims,
  })
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: "JWT" })
    .setIssuer(options.issuer ?? SESSION_TOKEN_ISSUER)
    .setAudience(options.audience ?? SESSION_TOKEN_AUDIENCE)
    .setIssuedAt(nowSeconds - 60);
  if (options.exp !== null) jwt.setExpirationTime(options.exp ?? nowSeconds + 600);
  return jwt.sign(key.privateKey);
}

async function rejection(promise: Promise<unknown>): Promise<InvalidSessionTokenError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidSessionTokenError);
  return err as InvalidSessionTokenError;
}

describe("verifySessionToken", () => {
  const current = newKey("current");
  // A key made before ES256: its tokens verify as long as it is in the set.
  const previous = newKey("previous", "EdDSA");
  const keys = { keys: [current.jwk, previous.jwk] };

  it("returns the claims of a valid token", async () => {
    const claims = await verifySessionToken(await sign(current), keys, NOW);
    expect(claims).toMatchObject({
      sub: "session-1",
      space_id: "space-1",
      api_key_id: "key-1",
      iss: SESSION_TOKEN_ISSUER,
      aud: SESSION_TOKEN_AUDIENCE,
      exp: nowSeconds + 600,
      start_session_data: startSessionData,
    });
  });

  it("accepts tokens of every key in the set (rotation)", async () => {
    expect((await verifySessionToken(await sign(previous), keys, NOW)).sub).toBe("session-1");
  });

  it("rejects an expired token and accepts it just before it expires", async () => {
    const token = await sign(current, { exp: nowSeconds });
    const before = new Date(NOW.getTime() - 1000);
    expect((await verifySessionToken(token, keys, before)).exp).toBe(nowSeconds);
    const err = await rejection(verifySessionToken(token, keys, new Date(NOW.getTime() + 1000)));
    expect(err.unknownKey).toBe(false);
    expect(err.message).toMatch(/exp/);
  });

  it("rejects a token without an expiry", async () => {
    await rejection(verifySessionToken(await sign(current, { exp: null }), keys, NOW));
  });

  it("rejects a token for another audience or from another issuer", async () => {
    await rejection(verifySessionToken(await sign(current, { audience: "someone-else" }), keys, NOW));
    await rejection(verifySessionToken(await sign(current, { issuer: "someone-else" }), keys, NOW));
  });

  it("rejects a token whose claims were changed after signing", async () => {
    const [header, payload, signature] = (await sign(current)).split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...claims, space_id: "space-2" })).toString("base64url");
    const err = await rejection(verifySessionToken(`${header}.${forged}.${signature}`, keys, NOW));
    expect(err.unknownKey).toBe(false);
  });

  it("rejects a token signed by another key under a known kid", async () => {
    const impostor = { ...newKey("x"), kid: current.kid };
    const err = await rejection(verifySessionToken(await sign(impostor), keys, NOW));
    expect(err.unknownKey).toBe(false);
  });

  it("flags a token signed with a key the set does not have as unknownKey", async () => {
    const err = await rejection(verifySessionToken(await sign(newKey("newer")), keys, NOW));
    expect(err.unknownKey).toBe(true);
  });

  it("rejects an algorithm session tokens do not use, even when the set has its key", async () => {
    const rsa = newKey("rsa", "RS256");
    const err = await rejection(verifySessionToken(await sign(rsa), { keys: [...keys.keys, rsa.jwk] }, NOW));
    expect(err.unknownKey).toBe(false);
  });

  it("rejects an unsigned token and garbage", async () => {
    const unsigned = new UnsecuredJWT({ sub: "s", space_id: "x", start_session_data: startSessionData })
      .setIssuer(SESSION_TOKEN_ISSUER)
      .setAudience(SESSION_TOKEN_AUDIENCE)
      .setExpirationTime(nowSeconds + 600)
      .encode();
    await rejection(verifySessionToken(unsigned, keys, NOW));
    await rejection(verifySessionToken("not-a-token", keys, NOW));
    await rejection(verifySessionToken("", keys, NOW));
  });

  it("rejects a valid signature over a token that lacks the session claims", async () => {
    for (const claims of [{ space_id: undefined }, { sub: undefined }, { start_session_data: undefined }]) {
      const err = await rejection(verifySessionToken(await sign(current, { claims }), keys, NOW));
      expect(err.message).toBe("session token lacks its claims");
    }
  });
});
