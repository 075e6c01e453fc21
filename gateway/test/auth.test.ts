import type { IncomingMessage } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { ApiKeyAuthenticator, type ApiKeyPrincipal } from "../src/auth/api-keys.js";
import { type Authenticators, authenticate } from "../src/auth/authenticate.js";
import { presentedCredentials, rateLimitIdentity } from "../src/auth/credentials.js";
import type { SessionPrincipal } from "../src/auth/session-tokens.js";
import type { HttpError } from "../src/http/http-error.js";
import { trustEveryone, trustNobody } from "../src/http/trusted-proxies.js";

const req = (headers: Record<string, string>, remoteAddress = "10.0.0.7") =>
  ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe("presented credentials", () => {
  it("reads the API key, the bearer token and the la_session cookie", () => {
    const c = presentedCredentials(
      req({ "x-api-key": " k1 ", authorization: "Bearer t1", cookie: "a=1; la_session=t%202; b=2" }),
      trustNobody,
    );
    expect(c).toEqual({ apiKey: "k1", bearer: "t1", cookie: "t 2", clientIp: "10.0.0.7" });
  });

  it("ignores other authorization schemes and empty values", () => {
    expect(presentedCredentials(req({ authorization: "Basic abc", "x-api-key": "" }), trustNobody)).toEqual({
      clientIp: "10.0.0.7",
    });
  });

  it("takes the client IP from X-Forwarded-For only behind a trusted proxy", () => {
    const r = req({ "x-forwarded-for": "203.0.113.9, 10.0.0.1" });
    expect(presentedCredentials(r, trustEveryone).clientIp).toBe("203.0.113.9");
    expect(presentedCredentials(r, trustNobody).clientIp).toBe("10.0.0.7");
  });

  it("counts a verified API key by its id, a verified session by its id, anything else by IP", () => {
    const presented = { apiKey: "k", bearer: "t", clientIp: "ip" };
    expect(rateLimitIdentity({ kind: "api_key", apiKeyId: "key-1" }, presented)).toBe("key:key-1");
    expect(rateLimitIdentity({ kind: "session", sessionId: "s-1" }, presented)).toBe("token:s-1");
    // Presented but not verified (junk, or not checked at all): the client IP.
    expect(rateLimitIdentity(undefined, presented)).toBe("ip:ip");
    expect(rateLimitIdentity({ kind: "anonymous" }, presented)).toBe("ip:ip");
  });
});

describe("authentication policies", () => {
  const keyPrincipal: ApiKeyPrincipal = { kind: "api_key", apiKeyId: "k", spaceId: "s" };
  const sessionPrincipal = { kind: "session", sessionId: "x", spaceId: "s" } as SessionPrincipal;
  const auth = {
    apiKeys: { authenticate: async (k: string) => (k === "good" ? keyPrincipal : null) },
    sessionTokens: { verify: async (t: string) => (t === "good" ? sessionPrincipal : null) },
  } as unknown as Authenticators;
  const status = async (p: Parameters<typeof authenticate>[0], c: Parameters<typeof authenticate>[1]) => {
    try {
      const principal = await authenticate(p, c, auth);
      return principal.kind;
    } catch (err) {
      return (err as HttpError).status;
    }
  };

  it.each([
    ["api_key", { apiKey: "good" }, "api_key"],
    ["api_key", { apiKey: "bad" }, 401],
    ["api_key", {}, 401],
    ["api_key", { bearer: "good" }, 403],
    ["api_key", { bearer: "bad" }, 401],
    ["session_token", { bearer: "good" }, "session"],
    ["session_token", { bearer: "bad" }, 401],
    ["session_token", { apiKey: "good" }, 403],
    ["session_token", { apiKey: "bad" }, 401],
    ["session_token", { cookie: "good" }, 401],
    ["api_key_or_session", { apiKey: "good" }, "api_key"],
    ["api_key_or_session", { bearer: "good" }, "session"],
    ["api_key_or_session", {}, 401],
    ["api_key_or_cookie", { cookie: "good" }, "session"],
    ["api_key_or_cookie", { cookie: "bad" }, 401],
    ["none", { apiKey: "bad" }, "anonymous"],
  ] as const)("%s with %o -> %s", async (policy, creds, expected) => {
    expect(await status(policy, { clientIp: "ip", ...creds })).toBe(expected);
  });
});

describe("API-key cache", () => {
  const found = { apiKey: { id: "key-1" }, space: { id: "space-1" } };

  it("asks the tokens service once per key while the answer is fresh, and again after", async () => {
    let now = 0;
    const authenticateApiKey = vi.fn(async () => found);
    const a = new ApiKeyAuthenticator({ authenticateApiKey } as never, { ttlMs: 1000, now: () => now });
    expect(await a.authenticate("k")).toEqual({ kind: "api_key", apiKeyId: "key-1", spaceId: "space-1" });
    await a.authenticate("k");
    expect(authenticateApiKey).toHaveBeenCalledTimes(1);
    now = 1001;
    await a.authenticate("k");
    expect(authenticateApiKey).toHaveBeenCalledTimes(2);
  });

  it("shares one lookup among concurrent requests with one key", async () => {
    const authenticateApiKey = vi.fn(async () => found);
    const a = new ApiKeyAuthenticator({ authenticateApiKey } as never);
    await Promise.all(Array.from({ length: 20 }, () => a.authenticate("k")));
    expect(authenticateApiKey).toHaveBeenCalledTimes(1);
  });

  it("remembers an unknown key briefly", async () => {
    let now = 0;
    const authenticateApiKey = vi.fn(async () => {
      throw new ConnectError("no", Code.Unauthenticated);
    });
    const a = new ApiKeyAuthenticator({ authenticateApiKey } as never, {
      negativeTtlMs: 100,
      now: () => now,
    });
    expect(await a.authenticate("x")).toBeNull();
    expect(await a.authenticate("x")).toBeNull();
    expect(authenticateApiKey).toHaveBeenCalledTimes(1);
    now = 101;
    await a.authenticate("x");
    expect(authenticateApiKey).toHaveBeenCalledTimes(2);
  });

  it("does not cache a failing tokens service, and lets the failure through", async () => {
    let calls = 0;
    const authenticateApiKey = async () => {
      calls++;
      if (calls === 1) throw new ConnectError("down", Code.Unavailable);
      return found;
    };
    const a = new ApiKeyAuthenticator({ authenticateApiKey } as never);
    await expect(a.authenticate("k")).rejects.toThrow(/down/);
    expect(await a.authenticate("k")).not.toBeNull();
  });

  it("drops a revoked key from the cache at once, also when the revocation arrives during its lookup", async () => {
    const authenticateApiKey = vi.fn(async () => found);
    const a = new ApiKeyAuthenticator({ authenticateApiKey } as never, { ttlMs: 60_000 });
    expect(await a.authenticate("k")).not.toBeNull();
    a.revoke("key-1");
    // Looked up again (not cached), and the tokens service's answer is overruled by what was heard.
    expect(await a.authenticate("k")).toBeNull();
    expect(authenticateApiKey).toHaveBeenCalledTimes(2);

    let answer: (v: typeof found) => void = () => {};
    const slow = new ApiKeyAuthenticator(
      { authenticateApiKey: () => new Promise<typeof found>((r) => (answer = r)) } as never,
      { ttlMs: 60_000 },
    );
    const pending = slow.authenticate("k");
    slow.revoke("key-1");
    answer(found);
    expect(await pending).toBeNull();
  });

  it("knows whether the key that minted a session token is revoked, asking the tokens service once", async () => {
    const getApiKey = vi.fn(async ({ apiKeyId }: { apiKeyId: string }) =>
      apiKeyId === "gone"
        ? { apiKey: { id: "gone", revokedAt: { seconds: 1n } } }
        : { apiKey: { id: apiKeyId } },
    );
    const a = new ApiKeyAuthenticator({ getApiKey } as never);
    expect(await a.isRevoked("live")).toBe(false);
    expect(await a.isRevoked("live")).toBe(false);
    expect(getApiKey).toHaveBeenCalledTimes(1);
    expect(await a.isRevoked("gone")).toBe(true);
    a.revoke("live");
    expect(await a.isRevoked("live")).toBe(true);
    expect(getApiKey).toHaveBeenCalledTimes(2);
  });
});
