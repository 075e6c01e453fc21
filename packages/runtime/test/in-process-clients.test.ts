import { TokensService } from "@avatar/contracts/tokens";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { clientsOnBehalfOf, InProcessServices, onBehalfOf, requestIdOf, silentLogger } from "../src/index.js";
import { collectingLogger } from "./support.js";

/** The tokens service's MintSessionToken, answering with what its context said. */
function tokensApp(seen: HandlerContext[], fail?: Error) {
  return {
    name: "tokens",
    routes: (router: ConnectRouter) =>
      router.service(TokensService, {
        mintSessionToken(req, ctx) {
          seen.push(ctx);
          if (fail) throw fail;
          return { sessionId: req.spaceId, sessionToken: `${ctx.protocolName} ${ctx.method.name}` };
        },
      }),
  };
}

describe("InProcessServices", () => {
  it("calls the registered implementation with a context that never aborts and makes its headers when read", async () => {
    const seen: HandlerContext[] = [];
    const services = new InProcessServices(silentLogger);
    services.register(tokensApp(seen));
    const res = await services.clients("gateway").tokens.mintSessionToken({ spaceId: "s1" });
    expect(res).toMatchObject({ sessionId: "s1", sessionToken: "in-process MintSessionToken" });
    const ctx = seen[0] as HandlerContext;
    expect(ctx.signal.aborted).toBe(false);
    expect(ctx.timeoutMs()).toBeUndefined();
    expect(ctx.url).toBe("/avatar.tokens.v1.TokensService/MintSessionToken");
    ctx.responseHeader.set("x-a", "1");
    expect(ctx.responseHeader.get("x-a")).toBe("1");
    expect(ctx.requestHeader.get("x-a")).toBeNull();
    expect(ctx.values).toBe(ctx.values);
  });

  it("refuses a caller the RPC's allow-list does not name, and answers Unavailable for a service not here", async () => {
    const seen: HandlerContext[] = [];
    const services = new InProcessServices(silentLogger);
    const call = (caller: "pipeline" | "gateway") =>
      services.clients(caller).tokens.mintSessionToken({ spaceId: "s1" });
    await expect(call("gateway")).rejects.toMatchObject({ code: Code.Unavailable });
    services.register(tokensApp(seen));
    await expect(call("pipeline")).rejects.toMatchObject({ code: Code.Internal });
    expect(seen).toHaveLength(0);
  });

  it("answers what a handler threw as a Connect server would", async () => {
    const services = new InProcessServices(silentLogger);
    services.register(tokensApp([], new ConnectError("no such space", Code.NotFound)));
    await expect(services.clients("gateway").tokens.mintSessionToken({})).rejects.toMatchObject({
      code: Code.NotFound,
    });
    const broken = new InProcessServices(silentLogger);
    broken.register(tokensApp([], new Error("boom")));
    await expect(broken.clients("gateway").tokens.mintSessionToken({})).rejects.toMatchObject({
      code: Code.Internal,
      rawMessage: "internal error",
    });
  });

  it("gives the handler the request id the call is made on behalf of, or a fresh one for none or an unusable one, as over HTTP", async () => {
    const seen: HandlerContext[] = [];
    const services = new InProcessServices(silentLogger);
    services.register(tokensApp(seen));
    const tokens = services.clients("gateway").tokens;
    await tokens.mintSessionToken({}, onBehalfOf("req-in-process"));
    await tokens.mintSessionToken({});
    await tokens.mintSessionToken({});
    await tokens.mintSessionToken({}, onBehalfOf("not an id\n"));
    const [given, fresh, other, unusable] = seen.map((ctx) => requestIdOf(ctx.values));
    expect(given).toBe("req-in-process");
    expect(fresh).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(other).not.toBe(fresh);
    expect(unusable).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it("logs an unexpected failure under the request id of its call", async () => {
    const { log, records } = collectingLogger();
    const services = new InProcessServices(log);
    services.register(tokensApp([], new Error("boom")));
    await expect(
      services.clients("gateway").tokens.mintSessionToken({}, onBehalfOf("req-broken")),
    ).rejects.toMatchObject({ code: Code.Internal });
    expect(records().find((r) => r.msg === "rpc failed unexpectedly")).toMatchObject({
      request_id: "req-broken",
      procedure: "/avatar.tokens.v1.TokensService/MintSessionToken",
    });
  });
});

describe("clientsOnBehalfOf", () => {
  it("makes every call of every service on behalf of one request, and keeps a call's own options", async () => {
    const seen: HandlerContext[] = [];
    const services = new InProcessServices(silentLogger);
    services.register(tokensApp(seen));
    const clients = clientsOnBehalfOf(services.clients("gateway"), "req-route");
    expect(clients.tokens).toBe(clients.tokens);
    await clients.tokens.mintSessionToken({ spaceId: "a" });
    await clients.tokens.mintSessionToken({ spaceId: "b" }, onBehalfOf("req-own"));
    expect(seen.map((ctx) => requestIdOf(ctx.values))).toEqual(["req-route", "req-own"]);
  });
});
