import { EmbedOrientation } from "@avatar/contracts/agents";
import { EMBED_PAGE_CSP, embedPage } from "../embed/page.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import * as s from "../schema/index.js";

/** The page an embed's `url` points at, and the session it mints for each visitor (no credential). */

export const embedPagePath = s.path({ embed_id: s.uuid() });

/** A visitor's choice of language; without it the embed's default_language. */
export const embedSessionBody = s.object("EmbedSessionRequest", {
  language: s.string().nullable().optional(),
});

type Ctx = RequestContext<s.Infer<typeof embedPagePath>, unknown, unknown>;

export async function showEmbedPage(ctx: Ctx): Promise<RouteResult> {
  const { embed } = await ctx.clients.agents.getEmbed({ embedId: ctx.params.embed_id });
  const vertical = embed?.orientation === EmbedOrientation.VERTICAL;
  return {
    raw: {
      contentType: "text/html; charset=utf-8",
      body: embedPage({ embedId: ctx.params.embed_id, vertical }),
    },
    headers: { "Content-Security-Policy": EMBED_PAGE_CSP, "Cache-Control": "no-store" },
  };
}

export async function mintEmbedSession(
  ctx: RequestContext<s.Infer<typeof embedPagePath>, unknown, s.Infer<typeof embedSessionBody>>,
): Promise<RouteResult> {
  const minted = await ctx.clients.tokens.mintEmbedSessionToken({
    embedId: ctx.params.embed_id,
    ...(ctx.body.language ? { language: ctx.body.language } : {}),
  });
  return { data: { session_id: minted.sessionId, session_token: minted.sessionToken } };
}
