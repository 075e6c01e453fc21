import { type Avatar, AvatarStatus } from "@avatar/contracts/catalog";
import { type SessionRequest, VideoQuality } from "@avatar/contracts/common";
import { invalidRequest } from "@avatar/runtime";
import type { AvatarLookup } from "./catalog-cache.js";
import { lookup } from "./lookup.js";

const statusNames: Partial<Record<AvatarStatus, string>> = {
  [AvatarStatus.INIT]: "INIT",
  [AvatarStatus.DEACTIVATED]: "DEACTIVATED",
  [AvatarStatus.DELETED]: "DELETED",
};

/**
 * The avatar of the request, visible to the space (404 otherwise), able to run this session: ACTIVE and
 * not expired, sandbox-enabled for a sandbox session, 1080p for very_high quality (400 otherwise).
 */
export async function resolveAvatar(
  catalog: AvatarLookup,
  spaceId: string,
  request: SessionRequest,
): Promise<Avatar> {
  const avatar = await lookup(
    request.avatarId,
    { field: "avatar_id", message: "Avatar not found" },
    async () => (await catalog.getAvatar({ spaceId, avatarId: request.avatarId })).avatar,
  );
  if (avatar.status !== AvatarStatus.ACTIVE) {
    const status = statusNames[avatar.status] ?? "not active";
    throw invalidRequest(`Avatar ${avatar.id} is ${status} and cannot run sessions`, { field: "avatar_id" });
  }
  if (avatar.isExpired) {
    throw invalidRequest(`Avatar ${avatar.id} has expired and cannot run sessions`, { field: "avatar_id" });
  }
  if (request.isSandbox && !avatar.sandboxEnabled) {
    throw invalidRequest(`Avatar ${avatar.id} is not enabled for sandbox sessions`, { field: "is_sandbox" });
  }
  if (request.videoSettings?.quality === VideoQuality.VERY_HIGH && !avatar.is1080p) {
    throw invalidRequest(`video quality very_high needs a 1080p avatar; ${avatar.id} is not one`, {
      field: "video_settings.quality",
    });
  }
  return avatar;
}
