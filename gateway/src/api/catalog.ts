import { VoiceType } from "@avatar/contracts/catalog";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentAvatar, presentVoice } from "../present/catalog.js";
import { paginated } from "../present/paginated.js";
import * as s from "../schema/index.js";
import { pageQuery, pageRequest } from "./paging.js";
import { spaceOf } from "./principal.js";

export const avatarPath = s.path({ avatar_id: s.uuid() });
export const voicePath = s.path({ voice_id: s.uuid() });
export const avatarListQuery = s.query({ ...pageQuery });
export const voiceListQuery = s.query({
  voice_type: s.enumOf(["public", "private"]).optional(),
  ...pageQuery,
});

type Ctx<P = unknown, Q = unknown> = RequestContext<P, Q, undefined>;

export async function listLanguages(ctx: Ctx): Promise<RouteResult> {
  const { languages } = await ctx.clients.catalog.listLanguages({});
  return { data: languages.map((l) => ({ language: l.language, code: l.code })) };
}

export async function listLlmModels(ctx: Ctx): Promise<RouteResult> {
  const { providers } = await ctx.clients.catalog.listLlmModels({});
  return { data: Object.fromEntries(providers.map((p) => [p.provider, p.models])) };
}

export async function listAvatars(ctx: Ctx<unknown, s.Infer<typeof avatarListQuery>>): Promise<RouteResult> {
  const res = await ctx.clients.catalog.listAvatars({
    spaceId: spaceOf(ctx.principal),
    page: pageRequest(ctx.query),
  });
  return {
    data: paginated(
      res.avatars.map((a) => presentAvatar(a, ctx.baseUrl)),
      res.page,
      ctx.url,
      ctx.baseUrl,
    ),
  };
}

export async function listPublicAvatars(
  ctx: Ctx<unknown, s.Infer<typeof avatarListQuery>>,
): Promise<RouteResult> {
  const res = await ctx.clients.catalog.listPublicAvatars({ page: pageRequest(ctx.query) });
  return {
    data: paginated(
      res.avatars.map((a) => presentAvatar(a, ctx.baseUrl)),
      res.page,
      ctx.url,
      ctx.baseUrl,
    ),
  };
}

export async function getAvatar(ctx: Ctx<s.Infer<typeof avatarPath>>): Promise<RouteResult> {
  const { avatar } = await ctx.clients.catalog.getAvatar({
    spaceId: spaceOf(ctx.principal),
    avatarId: ctx.params.avatar_id,
  });
  return { data: avatar ? presentAvatar(avatar, ctx.baseUrl) : null };
}

export async function listVoices(ctx: Ctx<unknown, s.Infer<typeof voiceListQuery>>): Promise<RouteResult> {
  const voiceType =
    ctx.query.voice_type === "public"
      ? VoiceType.PUBLIC
      : ctx.query.voice_type === "private"
        ? VoiceType.PRIVATE
        : VoiceType.UNSPECIFIED;
  const res = await ctx.clients.catalog.listVoices({
    spaceId: spaceOf(ctx.principal),
    voiceType,
    page: pageRequest(ctx.query),
  });
  return { data: paginated(res.voices.map(presentVoice), res.page, ctx.url, ctx.baseUrl) };
}

export async function getVoice(ctx: Ctx<s.Infer<typeof voicePath>>): Promise<RouteResult> {
  const { voice } = await ctx.clients.catalog.getVoice({
    spaceId: spaceOf(ctx.principal),
    voiceId: ctx.params.voice_id,
  });
  return { data: voice ? presentVoice(voice) : null };
}

export const AVATAR_NAME_MAX = 64;

/** `is_expired` and every other key are not part of the model: they are ignored, so they stay read-only. */
export const updateAvatarBody = s.object("UpdateAvatarRequest", {
  name: s.string({ minLength: 1, maxLength: AVATAR_NAME_MAX }).nullable().optional(),
  default_voice_id: s.uuid().nullable().optional().describe("A public voice or one of the space's."),
  is_deactivated: s
    .boolean()
    .nullable()
    .optional()
    .describe("true deactivates the avatar, false reactivates it."),
});

export async function updateAvatar(
  ctx: RequestContext<s.Infer<typeof avatarPath>, unknown, s.Infer<typeof updateAvatarBody>>,
): Promise<RouteResult> {
  const b = ctx.body;
  const { avatar } = await ctx.clients.catalog.updateAvatar({
    spaceId: spaceOf(ctx.principal),
    avatarId: ctx.params.avatar_id,
    name: b.name ?? undefined,
    defaultVoiceId: b.default_voice_id ?? undefined,
    isDeactivated: b.is_deactivated ?? undefined,
  });
  return { data: avatar ? presentAvatar(avatar, ctx.baseUrl) : null };
}

export async function deleteAvatar(ctx: Ctx<s.Infer<typeof avatarPath>>): Promise<RouteResult> {
  await ctx.clients.catalog.deleteAvatar({ spaceId: spaceOf(ctx.principal), avatarId: ctx.params.avatar_id });
  return { data: null };
}
