import { EmbedOrientation } from "@avatar/contracts/agents";
import { type Clients, embedOriginAllowed } from "@avatar/runtime";
import { embedPageHeaders } from "../embed/headers.js";
import { embedPage } from "../embed/page.js";
import { visitorError } from "../embed/visitor-errors.js";
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
    headers: embedPageHeaders({ baseUrl: ctx.baseUrl, allowedOrigins: embed?.allowedOrigins ?? [] }),
  };
}

/** The origins an embed's owner allowed to call its session endpoint from their pages. */
export async function embedCorsOrigins(params: Record<string, string>, clients: Clients) {
  const { embed } = await clients.agents.getEmbed({ embedId: params.embed_id ?? "" });
  return embed?.allowedOrigins ?? [];
}

/**
 * A visitor's session. From a browser, only the embed's own page (this service's origin) or a page of an
 * origin the owner allowed may mint one: anything else is refused before a session exists. The embed's
 * limits and the owner's credits are checked when the session is created (sessions service).
 */
export async function mintEmbedSession(
  ctx: RequestContext<s.Infer<typeof embedPagePath>, unknown, s.Infer<typeof embedSessionBody>>,
): Promise<RouteResult> {
  if (ctx.origin !== undefined && !ctx.sameOrigin && ctx.origin !== new URL(ctx.baseUrl).origin) {
    const { embed } = await ctx.clients.agents.getEmbed({ embedId: ctx.params.embed_id });
    if (!embedOriginAllowed(ctx.origin, embed?.allowedOrigins ?? []))
      throw visitorError(403, "origin_not_allowed");
  }
  const minted = await ctx.clients.tokens.mintEmbedSessionToken({
    embedId: ctx.params.embed_id,
    ...(ctx.body.language ? { language: ctx.body.language } : {}),
  });
  return { data: { session_id: minted.sessionId, session_token: minted.sessionToken } };
}
