import { type Embed, EmbedOrientation, EmbedSchema } from "@avatar/contracts/agents";
import { encodingOf, qualityOf } from "@avatar/media/video-settings";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { EmbedRow, OrientationValue } from "../schema.js";

export const orientationToProto: Record<OrientationValue, EmbedOrientation> = {
  horizontal: EmbedOrientation.HORIZONTAL,
  vertical: EmbedOrientation.VERTICAL,
};

export function embedToProto(row: EmbedRow): Embed {
  return create(EmbedSchema, {
    id: row.id,
    spaceId: row.space_id,
    avatarId: row.avatar_id,
    contextId: row.context_id ?? "",
    voiceId: row.voice_id ?? "",
    voiceAgentId: row.voice_agent_id ?? "",
    orientation: orientationToProto[row.orientation],
    maxSessionDuration: row.max_session_duration ?? 0,
    defaultLanguage: row.default_language ?? "",
    isSandbox: row.is_sandbox,
    videoSettings: { quality: qualityOf(row.video_quality), encoding: encodingOf(row.video_encoding) },
    createdAt: toTimestamp(row.created_at),
    maxConcurrentSessions: row.max_concurrent_sessions,
    maxSessionsPerHour: row.max_sessions_per_hour,
    allowedOrigins: row.allowed_origins,
    isDisabled: row.is_disabled,
  });
}
