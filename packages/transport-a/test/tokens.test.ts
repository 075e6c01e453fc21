import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { AccessToken, TokenVerifier, TrackSource } from "livekit-server-sdk";
import { describe, expect, it } from "vitest";
import {
  AGENT_IDENTITY,
  AVATAR_IDENTITY,
  grantFor,
  PUBLISH_ON_BEHALF_ATTRIBUTE,
  TransportAServer,
  TransportATokens,
  transportAConfig,
} from "../src/index.js";

const KEY = "APIkey123";
const SECRET = "a-secret-of-forty-characters-or-so-xxxxx";
const ROOM = "avatar-session-7f1c";
/** An injected clock far from the machine's: every time claim must follow it, not the real clock. */
const AT = new Date("2031-03-04T05:06:07.000Z");
const AT_SECONDS = AT.getTime() / 1000;

const config = transportAConfig({ url: "wss://sfu.example.test", apiKey: KEY, apiSecret: SECRET });
const server = new TransportAServer(config, { now: () => AT });
const secretKey = new TextEncoder().encode(SECRET);

describe("session room tokens", () => {
  it("a viewer: joins the session's room, subscribes, publishes nothing; exp on the injected clock", async () => {
    const access = await server.access(ROOM, { lite: false, ttlSeconds: 900 });
    expect(access.url).toBe("wss://sfu.example.test");
    expect(access.agentToken).toBeUndefined();
    const claims = decodeJwt(access.clientToken);
    expect(claims.iss).toBe(KEY);
    expect(claims.sub).toMatch(/^viewer-[0-9a-f-]{36}$/);
    expect(claims.nbf).toBe(AT_SECONDS);
    expect(claims.exp).toBe(AT_SECONDS + 900);
    expect(claims.video).toEqual({
      roomJoin: true,
      room: ROOM,
      canSubscribe: true,
      canPublish: false,
      canPublishData: false,
    });
    expect(decodeProtectedHeader(access.clientToken).alg).toBe("HS256");
    // Valid at the injected time, expired 900 s later.
    await expect(jwtVerify(access.clientToken, secretKey, { currentDate: AT })).resolves.toBeTruthy();
    await expect(
      jwtVerify(access.clientToken, secretKey, { currentDate: new Date(AT.getTime() + 901_000) }),
    ).rejects.toThrow(/exp/);
  });

  it("each start answer's viewer has its own identity (one viewer never drops another)", async () => {
    const a = decodeJwt((await server.access(ROOM, { lite: false, ttlSeconds: 60 })).clientToken);
    const b = decodeJwt((await server.access(ROOM, { lite: false, ttlSeconds: 60 })).clientToken);
    expect(a.sub).not.toBe(b.sub);
  });

  it("LITE: the agent token publishes its microphone and data and subscribes, as agent kind", async () => {
    const access = await server.access(ROOM, { lite: true, ttlSeconds: 120 });
    const claims = decodeJwt(access.agentToken ?? "");
    expect(claims.sub).toBe(AGENT_IDENTITY);
    expect(claims.kind).toBe("agent");
    expect(claims.exp).toBe(AT_SECONDS + 120);
    expect(claims.video).toEqual({
      roomJoin: true,
      room: ROOM,
      canSubscribe: true,
      canPublish: true,
      canPublishSources: ["microphone"],
      canPublishData: true,
    });
    // The viewer of a LITE session is still only a viewer.
    expect(decodeJwt(access.clientToken).video).toMatchObject({ canPublish: false, canSubscribe: true });
  });

  it("the avatar publishes camera and microphone, subscribes to nothing; in LITE on behalf of the agent", async () => {
    const full = decodeJwt(await server.avatarToken(ROOM, { lite: false, ttlSeconds: 3600 }));
    expect(full.sub).toBe(AVATAR_IDENTITY);
    expect(full.kind).toBe("agent");
    expect(full.attributes).toBeUndefined();
    expect(full.exp).toBe(AT_SECONDS + 3600);
    expect(full.video).toEqual({
      roomJoin: true,
      room: ROOM,
      canSubscribe: false,
      canPublish: true,
      canPublishSources: ["camera", "microphone"],
      canPublishData: false,
    });
    const lite = decodeJwt(await server.avatarToken(ROOM, { lite: true, ttlSeconds: 3600 }));
    expect(lite.attributes).toEqual({ [PUBLISH_ON_BEHALF_ATTRIBUTE]: AGENT_IDENTITY });
  });

  it("no token carries the API secret; a token signed with another secret does not verify", async () => {
    const token = await server.avatarToken(ROOM, { lite: true, ttlSeconds: 60 });
    expect(token).not.toContain(SECRET);
    expect(JSON.stringify(decodeJwt(token))).not.toContain(SECRET);
    expect(JSON.stringify(decodeProtectedHeader(token))).not.toContain(SECRET);
    await expect(
      jwtVerify(token, new TextEncoder().encode("another-secret-xxxxxxxxxxxxxxxxxx"), { currentDate: AT }),
    ).rejects.toThrow(/signature/);
  });

  it("a lifetime must be positive", async () => {
    const tokens = new TransportATokens(config, () => AT);
    await expect(tokens.mint({ role: "viewer", room: ROOM, identity: "v", ttlSeconds: 0 })).rejects.toThrow(
      RangeError,
    );
  });
});

describe("the transportA format", () => {
  it("has the claims the server SDK's AccessToken writes for the same grant, and its verifier accepts it", async () => {
    // On the machine's clock here, so the SDK's verifier (which reads it) judges both tokens alike.
    const ours = await new TransportATokens(config, () => new Date()).mint({
      role: "agent",
      room: ROOM,
      identity: AGENT_IDENTITY,
      kind: "agent",
      ttlSeconds: 600,
    });
    const sdk = new AccessToken(KEY, SECRET, { identity: AGENT_IDENTITY, ttl: 600 });
    sdk.addGrant({ ...grantFor("agent", ROOM), canPublishSources: [TrackSource.MICROPHONE] });
    sdk.kind = "agent";
    const theirs = await sdk.toJwt();
    const { nbf: _n1, exp: _e1, ...ourClaims } = decodeJwt(ours);
    const { nbf: _n2, exp: _e2, ...sdkClaims } = decodeJwt(theirs);
    expect(ourClaims).toEqual(sdkClaims);
    const verified = await new TokenVerifier(KEY, SECRET).verify(ours);
    expect(verified.sub).toBe(AGENT_IDENTITY);
  });
});
