import { EmbedOrientation } from "@avatar/contracts/agents";
import {
  AvatarPersonaSchema,
  SessionMode,
  SessionRequestSchema,
  VideoOrientation,
  VoiceAgentRefSchema,
} from "@avatar/contracts/common";
import { type MintEmbedSessionTokenRequest, MintSessionTokenRequestSchema } from "@avatar/contracts/tokens";
import { EMBED_DEFAULTS, forbidden, notFound } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { type MintDeps, mintSessionToken } from "./mint.js";

/**
 * MintEmbedSessionToken: the embed page's session, minted without an API key from the recipe stored
 * with the embed (in the embed's space, source EMBED). Every rule of the token endpoint applies, so an
 * embed whose avatar was deactivated or whose context needs dynamic variables is refused the same way.
 */
export async function mintEmbedSessionToken(deps: MintDeps, req: MintEmbedSessionTokenRequest) {
  const { embed } = await deps.agents.getEmbed({ embedId: req.embedId });
  if (!embed) throw notFound("Embed not found", { field: "embed_id" });
  if (embed.isDisabled) throw forbidden("The embed is disabled by its owner", { reason: "EMBED_DISABLED" });
  const language = req.language || embed.defaultLanguage || undefined;
  const request = create(SessionRequestSchema, {
    mode: SessionMode.FULL,
    avatarId: embed.avatarId,
    isSandbox: embed.isSandbox,
    videoSettings: {
      quality: embed.videoSettings?.quality,
      encoding: embed.videoSettings?.encoding,
      orientation:
        embed.orientation === EmbedOrientation.VERTICAL
          ? VideoOrientation.VERTICAL
          : VideoOrientation.HORIZONTAL,
    },
    ...(embed.maxSessionDuration > 0 ? { maxSessionDuration: embed.maxSessionDuration } : {}),
    ...(embed.voiceAgentId
      ? { voiceAgent: create(VoiceAgentRefSchema, { id: embed.voiceAgentId, language }) }
      : {
          avatarPersona: create(AvatarPersonaSchema, {
            voiceId: embed.voiceId || undefined,
            contextId: embed.contextId || undefined,
            language,
          }),
        }),
  });
  const mint = create(MintSessionTokenRequestSchema, { spaceId: embed.spaceId, request });
  // The sessions service creates the session only within the embed's limits and with credits for a
  // start: a visitor is never handed a session that cannot start (finding 4 of the security review).
  return mintSessionToken(deps, mint, {
    embedId: embed.id,
    embedAdmission: {
      maxConcurrentSessions: embed.maxConcurrentSessions || EMBED_DEFAULTS.maxConcurrentSessions,
      maxSessionsPerHour: embed.maxSessionsPerHour || EMBED_DEFAULTS.maxSessionsPerHour,
    },
  });
}
