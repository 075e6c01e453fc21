import { type Avatar, AvatarSchema, AvatarStatus, type Voice, VoiceSchema } from "@avatar/contracts/catalog";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { AvatarWithVoice } from "./repository.js";
import type { AvatarStatusValue, VoiceRow } from "./schema.js";

export const avatarStatusToProto: Record<AvatarStatusValue, AvatarStatus> = {
  ACTIVE: AvatarStatus.ACTIVE,
  INIT: AvatarStatus.INIT,
  DEACTIVATED: AvatarStatus.DEACTIVATED,
  DELETED: AvatarStatus.DELETED,
};

export const avatarStatusFromProto = (status: AvatarStatus): AvatarStatusValue | undefined =>
  (Object.entries(avatarStatusToProto) as [AvatarStatusValue, AvatarStatus][]).find(
    ([, v]) => v === status,
  )?.[0];

export function avatarToProto(row: AvatarWithVoice, now = new Date()): Avatar {
  return create(AvatarSchema, {
    id: row.id,
    spaceId: row.space_id ?? "",
    name: row.name,
    type: row.type,
    status: avatarStatusToProto[row.status],
    previewUrl: row.preview_url,
    defaultVoice: row.default_voice_id
      ? { id: row.default_voice_id, name: row.default_voice_name ?? "" }
      : undefined,
    defaultVoiceAgentId: row.default_voice_agent_id ?? "",
    is1080p: row.is_1080p,
    isPublic: row.is_public,
    sandboxEnabled: row.sandbox_enabled,
    isExpired: row.expires_at !== null && row.expires_at.getTime() <= now.getTime(),
    errorMessage: row.error_message,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}

export function voiceToProto(row: VoiceRow): Voice {
  return create(VoiceSchema, {
    id: row.id,
    spaceId: row.space_id ?? "",
    name: row.name,
    language: row.language,
    gender: row.gender,
    previewUrl: row.preview_url,
    isPublic: row.is_public,
    voiceEngines: row.voice_engines,
    providerVoiceIds: row.provider_voice_ids,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}
