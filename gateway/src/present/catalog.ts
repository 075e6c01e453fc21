import { type Avatar, AvatarStatus, type Voice } from "@avatar/contracts/catalog";
import { avatarPreviewPath } from "../api/avatar-images.js";
import { isoTime, orNull } from "./time.js";

const avatarStatus: Record<AvatarStatus, string> = {
  [AvatarStatus.UNSPECIFIED]: "INIT",
  [AvatarStatus.ACTIVE]: "ACTIVE",
  [AvatarStatus.INIT]: "INIT",
  [AvatarStatus.DEACTIVATED]: "DEACTIVATED",
  [AvatarStatus.DELETED]: "DELETED",
};

/** An avatar as the API shows it; its preview is the operator's picture, else our own rendering. */
export function presentAvatar(a: Avatar, baseUrl: string) {
  return {
    id: a.id,
    name: a.name,
    created_at: isoTime(a.createdAt),
    updated_at: isoTime(a.updatedAt),
    is_expired: a.isExpired,
    error_message: orNull(a.errorMessage),
    space_id: orNull(a.spaceId),
    type: a.type,
    status: avatarStatus[a.status],
    preview_url: a.previewUrl || `${baseUrl}${avatarPreviewPath(a.id)}`,
    default_voice: a.defaultVoice ? { id: a.defaultVoice.id, name: a.defaultVoice.name } : null,
    default_voice_agent_id: orNull(a.defaultVoiceAgentId),
    is_1080p: a.is1080p,
    is_public: a.isPublic,
    sandbox_enabled: a.sandboxEnabled,
  };
}

export function presentVoice(v: Voice) {
  return {
    id: v.id,
    name: v.name,
    language: v.language,
    gender: orNull(v.gender),
    preview_url: orNull(v.previewUrl),
    is_public: v.isPublic,
    space_id: orNull(v.spaceId),
    voice_engines: v.voiceEngines,
    created_at: isoTime(v.createdAt),
    updated_at: isoTime(v.updatedAt),
  };
}
