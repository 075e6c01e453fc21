import { EmbedOrientation } from "@avatar/contracts/agents";
import { PosterOrientation } from "@avatar/contracts/catalog";
import { HttpError } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import * as s from "../schema/index.js";

/**
 * Pictures of avatars for places that cannot send a credential (an `<img>`, a `<video poster>`): an
 * avatar's preview (its `preview_url` unless the operator gave one) and an embed's poster. Both show the
 * avatar rendered from its look, at rest; whoever knows the avatar's or the embed's id may see it.
 */

export const previewQuery = s.query({
  orientation: s.enumOf(["horizontal", "vertical"], { name: "OrientationEnum" }).optional(),
});

/** The preview URL of an avatar, as its `preview_url` shows it. */
export const avatarPreviewPath = (avatarId: string) => `/v1/avatars/${avatarId}/preview.png`;

const png = (bytes: Uint8Array, lookKey: string): RouteResult => ({
  raw: { contentType: "image/png", body: Buffer.from(bytes) },
  headers: { "Cache-Control": "public, max-age=300", ETag: `"${lookKey}"` },
});

export async function showAvatarPreview(
  ctx: RequestContext<{ avatar_id: string }, s.Infer<typeof previewQuery>, undefined>,
): Promise<RouteResult> {
  const res = await ctx.clients.catalog.getAvatarPoster({
    avatarId: ctx.params.avatar_id,
    anySpace: true,
    orientation:
      ctx.query.orientation === "vertical" ? PosterOrientation.VERTICAL : PosterOrientation.HORIZONTAL,
  });
  return png(res.png, res.lookKey);
}

export async function showEmbedPoster(
  ctx: RequestContext<{ embed_id: string }, unknown, undefined>,
): Promise<RouteResult> {
  const { embed } = await ctx.clients.agents.getEmbed({ embedId: ctx.params.embed_id });
  if (!embed) throw new HttpError(404, "Embed not found");
  const res = await ctx.clients.catalog.getAvatarPoster({
    avatarId: embed.avatarId,
    anySpace: true,
    orientation:
      embed.orientation === EmbedOrientation.VERTICAL
        ? PosterOrientation.VERTICAL
        : PosterOrientation.HORIZONTAL,
  });
  return png(res.png, res.lookKey);
}
