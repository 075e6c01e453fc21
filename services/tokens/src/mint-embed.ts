import { EmbedOrientation } from "@avatar/contracts/agents";
import {
  AvatarPersonaSchema,
  SessionMode,
  SessionRequestSchema,
  VideoOrientation,
  VoiceAgentRefSchema,
} from "@avatar/contracts/common";
import { type MintEmbedSessionTokenRequest, MintSessionTokenRequestSchema } from "@avatar/contracts/tokens";
import { notFound } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { type MintDeps, mintSessionToken } from "./mint.js";

/**
 * MintEmbedSessionToken: the embed page's session, minted without an API key from the recipe stored
 * with the embed (in the embed's space, source EMBED). Every rule of the token endpoint applies, so an
 * embed whose avatar was deactivated or whose context needs dynamic variables is refused the same way.
 */
export async function mintEmbedSessionToken(deps: MintDeps, req: MintEmbedSessionTokenRequest) {
  const { embed } = await deps.clients.agents.getEmbed({ embedId: req.embedId });
  if (!embed) throw notFound("Embed not found", { field: "embed_id" });
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
  return mintSessionToken(deps, mint, { embedId: embed.id });
}
