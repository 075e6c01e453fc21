import { CatalogService } from "@avatar/contracts/catalog";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { notFound } from "../src/errors.js";

/**
 * A catalog service for the tests of the services' HTTP client and server: the catalog contract only
 * lends its method shapes. Each handler answers one kind of case.
 */

export const BIG = "x".repeat(300_000);

/** What each server's handlers saw: the signal of the last call, and why slow calls were stopped. */
export interface Seen {
  lastSignal?: AbortSignal;
  stopped: (Code | undefined)[];
  intercepted: string[];
}

export function catalogRoutes(seen: Seen) {
  return (router: ConnectRouter) =>
    router.service(CatalogService, {
      listLanguages(_req, ctx) {
        seen.lastSignal = ctx.signal;
        ctx.responseHeader.set("x-answer", "1");
        ctx.responseTrailer.set("x-trailer", "2");
        return {
          languages: [
            { language: ctx.requestHeader.get("x-echo") ?? "", code: "en" },
            { language: BIG, code: "big" },
          ],
        };
      },
      getAvatar(req, ctx) {
        // A header value fetch's Headers takes and Node's HTTP refuses (a control character).
        if (req.avatarId === "unwritable") ctx.responseHeader.set("x-unwritable", "a\u0001b");
        if (req.avatarId === "missing") throw notFound("Avatar not found", { field: "avatar_id" });
        if (req.avatarId === "metadata")
          throw new ConnectError("refused", Code.FailedPrecondition, { "x-why": "because" });
        if (req.avatarId === "crash") throw new Error("boom");
        return { avatar: { id: req.avatarId, name: req.spaceId } };
      },
      // Slow: never answers before its signal fires.
      async listLlmModels(_req, ctx) {
        if (!ctx.signal.aborted)
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        seen.stopped.push(ConnectError.from(ctx.signal.reason).code);
        return {};
      },
    });
}
