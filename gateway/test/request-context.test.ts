import type { IncomingMessage } from "node:http";
import type { Bus } from "@avatar/bus";
import { type Clients, silentLogger } from "@avatar/runtime";
import { describe, expect, it } from "vitest";
import { GatewayRequestContext, type SharedContext } from "../src/http/request-context.js";

function shared(): SharedContext & { baseUrls: number } {
  const s = {
    baseUrls: 0,
    clients: { tokens: {} } as unknown as Clients,
    bus: {} as Bus,
    log: silentLogger,
    baseUrl: () => {
      s.baseUrls++;
      return "https://api.example";
    },
    https: () => true,
    apiKeyRevoked: async (id: string) => id === "revoked",
  };
  return s;
}

const req = (headers: IncomingMessage["headers"]) => ({ headers }) as IncomingMessage;
const parsed = { params: { id: "p" }, query: { q: 1 }, body: { b: true } };
const url = new URL("http://gateway.invalid/v1/x?q=1");

describe("GatewayRequestContext", () => {
  it("hands a route its request's parts and what the gateway shares", async () => {
    const s = shared();
    const ctx = new GatewayRequestContext(
      s,
      req({ origin: "https://a.example" }),
      { kind: "anonymous" },
      parsed,
      url,
      "r-1",
    );
    expect([ctx.params, ctx.query, ctx.body]).toEqual([{ id: "p" }, { q: 1 }, { b: true }]);
    expect([ctx.url, ctx.requestId, ctx.principal]).toEqual([url, "r-1", { kind: "anonymous" }]);
    expect([ctx.processClients, ctx.bus, ctx.log]).toEqual([s.clients, s.bus, s.log]);
    expect([ctx.origin, ctx.sameOrigin, ctx.https]).toEqual(["https://a.example", false, true]);
    expect(await ctx.apiKeyRevoked("revoked")).toBe(true);
    expect(await ctx.apiKeyRevoked("other")).toBe(false);
  });

  it("makes the clients on behalf of the request once, on their first read", () => {
    const ctx = new GatewayRequestContext(shared(), req({}), { kind: "anonymous" }, parsed, url, "r-2");
    const clients = ctx.clients;
    expect(clients).not.toBe(ctx.processClients);
    expect(ctx.clients).toBe(clients);
  });

  it("works out the base URL only when it is read, and keeps the cookies a route sets", () => {
    const s = shared();
    const ctx = new GatewayRequestContext(
      s,
      req({ "sec-fetch-site": "same-origin" }),
      { kind: "anonymous" },
      parsed,
      url,
      "r-3",
    );
    expect(s.baseUrls).toBe(0);
    expect(ctx.baseUrl).toBe("https://api.example");
    expect(s.baseUrls).toBe(1);
    expect([ctx.origin, ctx.sameOrigin]).toEqual([undefined, true]);
    expect(ctx.cookies).toBeUndefined();
    ctx.setCookie("a=1");
    ctx.setCookie("b=2");
    expect(ctx.cookies).toEqual(["a=1", "b=2"]);
  });
});
