import { EmbedOrientation } from "@avatar/contracts/agents";
import { HttpError } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentEmbed } from "../present/agents.js";
import * as s from "../schema/index.js";
import { spaceOf } from "./principal.js";
import { videoSettings } from "./session-token.mapping.js";
import { VideoSettings } from "./session-token.schema.js";

/**
 * POST /v2/embeddings: a stored session recipe behind a web page (`url`, served by the gateway at
 * /embed/{id}) and an iframe snippet (`script`) that shows it.
 */

export const ORIENTATIONS = ["horizontal", "vertical"] as const;

export const createEmbedBody = s.object("CreateEmbedRequest", {
  avatar_id: s.uuid(),
  context_id: s.uuid().nullable().optional(),
  voice_id: s.uuid().nullable().optional(),
  voice_agent_id: s.uuid().nullable().optional().describe("Mutually exclusive with voice_id and context_id."),
  orientation: s
    .enumOf(ORIENTATIONS, { name: "EmbedOrientation" })
    .default("horizontal")
    .describe("horizontal is 16:9, vertical 9:16."),
  max_session_duration: s.int({ ge: 1 }).nullable().optional().describe("Seconds; at most the tier's limit."),
  default_language: s.string({ minLength: 1, maxLength: 16 }).nullable().optional(),
  is_sandbox: s.boolean().default(false),
  video_settings: VideoSettings.nullable()
    .optional()
    .describe("The video its sessions stream; very_high needs a 1080p avatar."),
});

type Body = s.Infer<typeof createEmbedBody>;

export async function createEmbed(ctx: RequestContext<unknown, unknown, Body>): Promise<RouteResult> {
  const b = ctx.body;
  const spaceId = spaceOf(ctx.principal);
  if (b.max_session_duration !== undefined && b.max_session_duration !== null) {
    await checkDuration(ctx, spaceId, b.max_session_duration);
  }
  const { embed } = await ctx.clients.agents.createEmbed({
    spaceId,
    avatarId: b.avatar_id,
    contextId: b.context_id ?? undefined,
    voiceId: b.voice_id ?? undefined,
    voiceAgentId: b.voice_agent_id ?? undefined,
    orientation: b.orientation === "vertical" ? EmbedOrientation.VERTICAL : EmbedOrientation.HORIZONTAL,
    maxSessionDuration: b.max_session_duration ?? undefined,
    defaultLanguage: b.default_language ?? undefined,
    isSandbox: b.is_sandbox,
    videoSettings: videoSettings(b.video_settings),
  });
  return { data: embed ? presentEmbed(embed, ctx.baseUrl) : null };
}

/** The same limit, and the same 422, as the token request's max_session_duration. */
async function checkDuration(ctx: RequestContext<unknown, unknown, Body>, spaceId: string, seconds: number) {
  const { space } = await ctx.clients.tokens.getSpace({ spaceId });
  const limit = space?.maxSessionDuration ?? 0;
  if (limit > 0 && seconds > limit) {
    const msg = `Input should be less than or equal to ${limit}`;
    throw new HttpError(422, msg, [
      {
        type: "less_than_equal",
        loc: ["body", "max_session_duration"],
        msg,
        input: seconds,
        ctx: { le: limit },
      },
    ]);
  }
}
