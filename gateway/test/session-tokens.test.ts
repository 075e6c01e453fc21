import { randomUUID } from "node:crypto";
import { newSessionTokenKeyPair, SESSION_TOKEN_AUDIENCE, SESSION_TOKEN_ISSUER } from "@avatar/runtime";
import { importJWK, SignJWT } from "jose";
import { describe, expect, it, vi } from "vitest";
import { SessionTokenVerifier } from "../src/auth/session-tokens.js";

/**
 * A signing key as the tokens service publishes it, and a signer using its private half. Tokens are
 * stamped on `clock` (the machine's unless a test gives the one its verifier runs on).
 */
function keyPair(clock: () => number = Date.now) {
  const kid = randomUUID();
  const { publicKey, privateKey } = newSessionTokenKeyPair("ES256");
  const published = { kid, alg: "ES256", publicJwk: JSON.stringify(publicKey.export({ format: "jwk" })) };
  const sign = async (claims: Record<string, unknown>, expSeconds = 600) => {
    const nowSeconds = Math.floor(clock() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid })
      .setIssuer(SESSION_TOKEN_ISSUER)
      .setAudience(SESSION_TOKEN_AUDIENCE)
      .setIssuedAt(nowSeconds)
      .setExpirationTime(nowSeconds + expSeconds)
      .sign(await importJWK(privateKey.export({ format: "jwk" }) as never, "ES256"));
  };
  return { published, sign };
}

const claims = {
  sub: "8d6f3c0e-0000-4000-8000-000000000001",
  space_id: "space-1",
  api_key_id: "key-1",
  start_session_data: {
    mode: "FULL",
    avatar_id: "a",
    is_sandbox: false,
    video_settings: {},
    interactivity_type: "CONVERSATIONAL",
    agent_type: null,
  },
};

describe("session-token verification in the gateway", () => {
  it("verifies locally with the published keys, fetched once", async () => {
    const k = keyPair();
    const getSigningKeys = vi.fn(async () => ({ keys: [k.published] }));
    const v = new SessionTokenVerifier({ getSigningKeys } as never);
    const p = await v.verify(await k.sign(claims));
    expect(p).toMatchObject({
      kind: "session",
      sessionId: claims.sub,
      spaceId: "space-1",
      apiKeyId: "key-1",
    });
    await v.verify(await k.sign(claims));
    expect(getSigningKeys).toHaveBeenCalledTimes(1);
  });

  it("fetches the keys again when a token names a new key (rotation), at most once per interval", async () => {
    let now = Date.parse("2026-11-22T10:00:00.000Z");
    const clock = () => now;
    const old = keyPair(clock);
    const rotated = keyPair(clock);
    let published = [old.published];
    const getSigningKeys = vi.fn(async () => ({ keys: published }));
    const v = new SessionTokenVerifier({ getSigningKeys } as never, {
      refreshIntervalMs: 1000,
      now: () => now,
    });
    expect(await v.verify(await old.sign(claims))).not.toBeNull();
    published = [rotated.published, old.published];
    now += 5000;
    expect(await v.verify(await rotated.sign(claims))).not.toBeNull();
    expect(await v.verify(await old.sign(claims))).not.toBeNull();
    expect(getSigningKeys).toHaveBeenCalledTimes(2);
    // A token of an unknown key right after a refresh does not trigger another fetch.
    expect(await v.verify(await keyPair(clock).sign(claims))).toBeNull();
    expect(getSigningKeys).toHaveBeenCalledTimes(2);
  });

  it("judges expiry on its own clock", async () => {
    let now = Date.parse("2026-11-22T10:00:00.000Z");
    const k = keyPair(() => now);
    const v = new SessionTokenVerifier({ getSigningKeys: async () => ({ keys: [k.published] }) } as never, {
      now: () => now,
    });
    const token = await k.sign(claims, 60);
    now += 59_000;
    expect(await v.verify(token)).not.toBeNull();
    now += 2_000;
    expect(await v.verify(token)).toBeNull();
  });

  it("rejects expired, tampered and foreign tokens and garbage", async () => {
    const k = keyPair();
    const v = new SessionTokenVerifier({ getSigningKeys: async () => ({ keys: [k.published] }) } as never);
    expect(await v.verify(await k.sign(claims, -10))).toBeNull();
    const good = await k.sign(claims);
    const [h, , s] = good.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, space_id: "other" })).toString("base64url")}.${s}`;
    expect(await v.verify(forged)).toBeNull();
    expect(await v.verify("not-a-jwt")).toBeNull();
    const noClaims = await k.sign({ sub: "x" });
    expect(await v.verify(noClaims)).toBeNull();
  });
});
