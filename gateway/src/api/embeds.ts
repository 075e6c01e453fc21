import { EmbedOrientation } from "@avatar/contracts/agents";
import { EMBED_BOUNDS, EMBED_DEFAULTS, embedOriginProblem } from "@avatar/runtime";
import { HttpError } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentEmbed } from "../present/agents.js";
import * as s from "../schema/index.js";
import { spaceOf } from "./principal.js";
import { MAX_DURATION_WIRE_LIMIT, videoSettings } from "./session-token.mapping.js";
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
  ...embedLimitFields(),
});

/** The owner's limits of an embed's visitors (additive fields of create, and PATCH). */
function embedLimitFields() {
  const { maxConcurrentSessions: concurrent, maxSessionsPerHour: hourly } = EMBED_BOUNDS;
  const origin = s.string({ minLength: 1, maxLength: 2083 }).refine(
    (o) => embedOriginProblem(o) === undefined,
    (o) => `origin ${embedOriginProblem(o)}`,
  );
  return {
    max_concurrent_sessions: s
      .int({ ge: concurrent.min, le: concurrent.max })
      .nullable()
      .optional()
      .describe(
        `Visitors' sessions at once (started, or minted and not started for a minute); ` +
          `default ${EMBED_DEFAULTS.maxConcurrentSessions}.`,
      ),
    max_sessions_per_hour: s
      .int({ ge: hourly.min, le: hourly.max })
      .nullable()
      .optional()
      .describe(`Visitors' sessions minted per rolling hour; default ${EMBED_DEFAULTS.maxSessionsPerHour}.`),
    allowed_origins: s
      .array(origin, { maxItems: EMBED_BOUNDS.allowedOrigins })
      .nullable()
      .optional()
      .describe(
        "Origins (https://www.example.com) whose pages may frame the embed (its script) and call its session " +
          'endpoint from a browser; "*" for any. Default none: the page works opened at its url, not framed elsewhere.',
      ),
  };
}

export const updateEmbedBody = s.object("UpdateEmbedRequest", {
  ...embedLimitFields(),
  is_disabled: s.boolean().nullable().optional().describe("A disabled embed mints no sessions."),
});

export const embedPath = s.path({ embed_id: s.uuid() });

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
    maxConcurrentSessions: b.max_concurrent_sessions ?? undefined,
    maxSessionsPerHour: b.max_sessions_per_hour ?? undefined,
    allowedOrigins: b.allowed_origins ?? [],
  });
  return { data: embed ? presentEmbed(embed, ctx.baseUrl) : null };
}

/** GET /v2/embeddings/{embed_id}: the owner's view, limits included; another space's embed is 404. */
export async function getEmbed(ctx: RequestContext<s.Infer<typeof embedPath>, unknown, unknown>) {
  const { embed } = await ctx.clients.agents.getEmbed({ embedId: ctx.params.embed_id });
  if (!embed || embed.spaceId !== spaceOf(ctx.principal)) throw new HttpError(404, "Embed not found");
  return { data: presentEmbed(embed, ctx.baseUrl) };
}

/** PATCH /v2/embeddings/{embed_id}: limits, allowed origins, disabling. Absent fields stay as they are. */
export async function updateEmbed(
  ctx: RequestContext<s.Infer<typeof embedPath>, unknown, s.Infer<typeof updateEmbedBody>>,
): Promise<RouteResult> {
  const b = ctx.body;
  const { embed } = await ctx.clients.agents.updateEmbed({
    spaceId: spaceOf(ctx.principal),
    embedId: ctx.params.embed_id,
    maxConcurrentSessions: b.max_concurrent_sessions ?? undefined,
    maxSessionsPerHour: b.max_sessions_per_hour ?? undefined,
    ...(b.allowed_origins ? { allowedOrigins: { origins: b.allowed_origins } } : {}),
    isDisabled: b.is_disabled ?? undefined,
  });
  return { data: embed ? presentEmbed(embed, ctx.baseUrl) : null };
}

/** The same limit, and the same 422, as the token request's max_session_duration. */
async function checkDuration(ctx: RequestContext<unknown, unknown, Body>, spaceId: string, seconds: number) {
  const { space } = await ctx.clients.tokens.getSpace({ spaceId });
  // Without a tier limit, the most the services can carry (an int32) is the bound.
  const limit =
    (space?.maxSessionDuration ?? 0) > 0 ? (space?.maxSessionDuration ?? 0) : MAX_DURATION_WIRE_LIMIT;
  if (seconds > limit) {
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
