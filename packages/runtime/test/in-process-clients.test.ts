import { TokensService } from "@avatar/contracts/tokens";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { InProcessServices, silentLogger } from "../src/index.js";

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
});
