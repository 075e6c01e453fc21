import { type Avatar, AvatarStatus, type Voice } from "@avatar/contracts/catalog";
import type { ApiKey, SigningKey, Space } from "@avatar/contracts/tokens";
import { fromTimestamp } from "@avatar/runtime";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { tierName } from "./tiers.js";

/** Plain snake_case views of the services' messages: what --json prints and tables show. */

const iso = (ts: Timestamp | undefined): string | null => fromTimestamp(ts)?.toISOString() ?? null;

export function spaceView(space: Space | undefined) {
  return {
    id: space?.id ?? "",
    name: space?.name ?? "",
    tier: tierName(space?.tier ?? 0),
    max_session_duration: space?.maxSessionDuration ?? 0,
    created_at: iso(space?.createdAt),
  };
}

export function apiKeyView(key: ApiKey | undefined) {
  return {
    id: key?.id ?? "",
    space_id: key?.spaceId ?? "",
    name: key?.name ?? "",
    prefix: key?.prefix ?? "",
    created_at: iso(key?.createdAt),
    revoked_at: iso(key?.revokedAt),
  };
}

export function signingKeyView(key: SigningKey | undefined) {
  return {
    kid: key?.kid ?? "",
    alg: key?.alg ?? "",
    current: key?.current ?? false,
    created_at: iso(key?.createdAt),
  };
}

export function avatarView(avatar: Avatar) {
  return {
    id: avatar.id,
    name: avatar.name,
    status: AvatarStatus[avatar.status] ?? "UNSPECIFIED",
    space_id: avatar.spaceId || null,
    is_public: avatar.isPublic,
  };
}

export function voiceView(voice: Voice) {
  return {
    id: voice.id,
    name: voice.name,
    language: voice.language,
    space_id: voice.spaceId || null,
    is_public: voice.isPublic,
  };
}
