import { randomUUID } from "node:crypto";
import * as runtime from "@avatar/runtime";
import { importJWK, SignJWT } from "jose";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { SessionTokenVerifier } from "../src/auth/session-tokens.js";

// Counts the signature checks the verifier asks for; each still runs for real.
vi.mock("@avatar/runtime", async (actual) => {
  const real = await actual<typeof import("@avatar/runtime")>();
  return { ...real, verifySessionToken: vi.fn(real.verifySessionToken) };
});
const checks = vi.mocked(runtime.verifySessionToken);

const start = Date.parse("2026-11-22T10:00:00.000Z");

async function signer(clock: () => number) {
  const kid = randomUUID();
  const { publicKey, privateKey } = runtime.newSessionTokenKeyPair("ES256");
  const published = { kid, alg: "ES256", publicJwk: JSON.stringify(publicKey.export({ format: "jwk" })) };
  const key = await importJWK(privateKey.export({ format: "jwk" }) as never, "ES256");
  const sign = (sub: string, lifetimeS: number, extra: Record<string, unknown> = {}) => {
    const nowS = Math.floor(clock() / 1000);
    return new SignJWT({
      space_id: "space-1",
      api_key_id: "key-1",
      start_session_data: { mode: "LITE" },
      ...extra,
    })
      .setProtectedHeader({ alg: "ES256", kid })
      .setSubject(sub)
      .setIssuer(runtime.SESSION_TOKEN_ISSUER)
      .setAudience(runtime.SESSION_TOKEN_AUDIENCE)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + lifetimeS)
      .sign(key);
  };
  return { published, sign };
}

describe("the gateway's memory of verified session tokens", () => {
  let now = start;
  const clock = () => now;
  beforeEach(() => {
    now = start;
    checks.mockClear();
  });
  /** A gateway's verifier that knows `published`, on the test's clock. */
  const verifierOf = (published: unknown) =>
    new SessionTokenVerifier({ getSigningKeys: async () => ({ keys: [published] }) } as never, {
      now: clock,
    });

  it("checks a token's signature once: a start, its keep-alives and its stop present the same one", async () => {
    const k = await signer(clock);
    const v = verifierOf(k.published);
    const token = await k.sign("session-1", 600);
    for (let i = 0; i < 3; i++) expect((await v.verify(token))?.sessionId).toBe("session-1");
    expect(checks).toHaveBeenCalledTimes(1);
    expect((await v.verify(await k.sign("session-2", 600)))?.sessionId).toBe("session-2");
    expect(checks).toHaveBeenCalledTimes(2);
  });

  it("still judges expiry: a remembered token is refused from its exp second on", async () => {
    const k = await signer(clock);
    const v = verifierOf(k.published);
    const token = await k.sign("session-1", 60);
    expect(await v.verify(token)).not.toBeNull();
    now += 59_999;
    expect(await v.verify(token)).not.toBeNull();
    expect(checks).toHaveBeenCalledTimes(1);
    now += 1;
    expect(await v.verify(token)).toBeNull();
  });

  it("takes nothing from memory for a token that differs from a remembered one", async () => {
    const k = await signer(clock);
    const v = verifierOf(k.published);
    const token = await k.sign("session-1", 600);
    expect(await v.verify(token)).not.toBeNull();
    const [header, , signature] = token.split(".");
    const claims = { sub: "session-1", space_id: "other-space", api_key_id: "key-1", exp: 9e9 };
    const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`;
    expect(await v.verify(forged)).toBeNull();
  });

  it("forgets what it verified when the keys are fetched again (a rotation)", async () => {
    const old = await signer(clock);
    const rotated = await signer(clock);
    let published = [old.published];
    const v = new SessionTokenVerifier({ getSigningKeys: async () => ({ keys: published }) } as never, {
      now: clock,
      refreshIntervalMs: 0,
    });
    const token = await old.sign("session-1", 600);
    expect(await v.verify(token)).not.toBeNull();
    // The old key is withdrawn and a token of the new one makes the gateway fetch the keys again.
    published = [rotated.published];
    expect(await v.verify(await rotated.sign("session-2", 600))).not.toBeNull();
    expect(await v.verify(token)).toBeNull();
  });

  it("leaves a token with a start of validity (nbf) to the full check every time", async () => {
    const k = await signer(clock);
    const v = verifierOf(k.published);
    const token = await k.sign("session-1", 600, { nbf: Math.floor(start / 1000) });
    expect(await v.verify(token)).not.toBeNull();
    expect(await v.verify(token)).not.toBeNull();
    expect(checks).toHaveBeenCalledTimes(2);
  });
});
