import http from "node:http";
import net from "node:net";
import { type RunningGateway, readGatewayConfig, startGateway } from "@avatar/gateway";
import { silentLogger } from "@avatar/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADA, bearer, grant, key, mint } from "./sessions-support.js";
import { startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 7 of the security review (the parts beyond the embed page): links and ws_url never come from
 * an untrusted Host header, la_session is Secure over HTTPS through a trusted proxy, and what Node's
 * parser refuses is answered in the envelope.
 */

let suite: TestSuite;
let allowList: RunningGateway;
let proxied: RunningGateway;

const gatewayWith = (env: Record<string, string>) =>
  startGateway({
    clients: suite.clients,
    bus: suite.bus,
    log: silentLogger,
    config: readGatewayConfig({ RATE_LIMIT_STORE_TIMEOUT_MS: "2000", ...env }),
    port: 0,
    host: "127.0.0.1",
    rateLimitStore: { increment: async () => 1 },
  });

beforeAll(async () => {
  suite = await startTestSuite({ overrides: { rateLimitStore: { increment: async () => 1 } } });
  allowList = await gatewayWith({ PUBLIC_HOSTS: "api.example.com, 127.0.0.1" });
  proxied = await gatewayWith({ TRUST_PROXY: "true", PUBLIC_HOSTS: "api.example.com" });
  await grant(suite, "100");
});
afterAll(async () => {
  await allowList?.close();
  await proxied?.close();
  await suite?.stop();
});

/** A request with headers fetch will not set (Host). */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    if (body !== undefined) req.setHeader("content-type", "application/json");
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const port = (url: string) => new URL(url).port;

describe("absolute URLs never come from an untrusted Host", () => {
  it("without PUBLIC_BASE_URL or PUBLIC_HOSTS: a foreign Host gets localhost links, a loopback one is kept", async () => {
    const list = await raw(suite.gatewayUrl, "GET", "/v1/avatars/public?page_size=1", {
      host: "evil.example",
    });
    const next = JSON.parse(list.body).data.next as string;
    expect(new URL(next).host).toBe(`localhost:${port(suite.gatewayUrl)}`);
    const minted = await mint(suite, { is_sandbox: true });
    const started = await raw(suite.gatewayUrl, "POST", "/v1/sessions/start", {
      host: "evil.example:8443",
      ...bearer(minted.session_token),
    });
    const wsUrl = new URL(JSON.parse(started.body).data.ws_url);
    expect(wsUrl.host).toBe(`localhost:${port(suite.gatewayUrl)}`);
    const local = await raw(suite.gatewayUrl, "GET", "/v1/avatars/public?page_size=1", {
      host: `127.0.0.1:${port(suite.gatewayUrl)}`,
    });
    expect(new URL(JSON.parse(local.body).data.next).host).toBe(`127.0.0.1:${port(suite.gatewayUrl)}`);
  });

  it("with PUBLIC_HOSTS: listed hosts are kept, any other Host gets the first listed one", async () => {
    const listed = await raw(allowList.url, "GET", "/v1/avatars/public?page_size=1", {
      host: "api.example.com",
    });
    expect(JSON.parse(listed.body).data.next).toMatch(/^http:\/\/api\.example\.com\/v1\/avatars\/public\?/);
    const foreign = await raw(allowList.url, "GET", "/v1/avatars/public?page_size=1", {
      host: "evil.example",
    });
    expect(new URL(JSON.parse(foreign.body).data.next).hostname).toBe("api.example.com");
    const embed = await raw(
      allowList.url,
      "POST",
      "/v2/embeddings",
      { host: "evil.example", ...key(suite.apiKey) },
      { avatar_id: ADA, is_sandbox: true },
    );
    expect(embed.status).toBe(200);
    expect(new URL(JSON.parse(embed.body).data.url).hostname).toBe("api.example.com");
  });
});

describe("la_session is Secure over HTTPS through a trusted proxy", () => {
  async function cookieFrom(base: string, headers: Record<string, string>) {
    const minted = await mint(suite, { is_sandbox: true });
    const res = await raw(base, "POST", "/v1/sessions/start", {
      ...bearer(minted.session_token),
      ...headers,
    });
    expect(res.status).toBe(201);
    return String(res.headers["set-cookie"]);
  }

  it("X-Forwarded-Proto: https or Forwarded: proto=https from a trusted proxy: Secure, and https links", async () => {
    expect(await cookieFrom(proxied.url, { "x-forwarded-proto": "https" })).toMatch(/; Secure/);
    expect(await cookieFrom(proxied.url, { forwarded: 'for=203.0.113.7;proto="https"' })).toMatch(/; Secure/);
    expect(await cookieFrom(proxied.url, {})).not.toMatch(/Secure/);
  });

  it("not from an untrusted one (TRUST_PROXY unset)", async () => {
    expect(await cookieFrom(suite.gatewayUrl, { "x-forwarded-proto": "https" })).not.toMatch(/Secure/);
  });
});

describe("requests Node's parser refuses get the envelope", () => {
  function rawSocket(base: string, text: string): Promise<string> {
    const { hostname, port: p } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(p), hostname, () => socket.write(text));
      let answer = "";
      socket.on("data", (d) => {
        answer += d;
      });
      socket.on("end", () => resolve(answer));
      socket.on("error", reject);
    });
  }

  it("431 for headers too large, 400 for a malformed request, both with a JSON envelope", async () => {
    const big = await rawSocket(
      suite.gatewayUrl,
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(big).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(big.slice(big.indexOf("\r\n\r\n") + 4))).toEqual({
      code: 4310,
      data: null,
      message: "Request header fields too large",
    });
    // A target the parser lets through and URL refuses: 400 with the envelope, and the gateway serves on.
    // The same target on a WebSocket upgrade (the event socket's handshake).
    const upgrade =
      "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==";
    for (const [target, headers] of [
      ["http://[::1", "Connection: close"],
      ["http://%zz/v1/avatars", "Connection: close"],
      ["http://[::1/v1/events", upgrade],
    ]) {
      const refused = await rawSocket(
        suite.gatewayUrl,
        `GET ${target} HTTP/1.1\r\nHost: x\r\n${headers}\r\n\r\n`,
      );
      expect(refused).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(refused.slice(refused.indexOf("\r\n\r\n") + 4))).toEqual({
        code: 4000,
        data: null,
        message: "Bad request",
      });
    }
    expect((await suite.get("/v1/languages")).status).toBe(200);
    const bad = await rawSocket(suite.gatewayUrl, "NOT A REQUEST\r\n\r\n");
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(bad.slice(bad.indexOf("\r\n\r\n") + 4))).toEqual({
      code: 4000,
      data: null,
      message: "Bad request",
    });
  });
});
