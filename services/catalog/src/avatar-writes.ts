import type { CatalogService } from "@avatar/contracts/catalog";
import { SessionEndReason } from "@avatar/contracts/sessions";
import { invalidRequest, isUuid, type Logger, notFound, requestIdOf } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { avatarToProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { CatalogDatabase } from "./schema.js";

/**
 * Ends the sessions running on an avatar (SessionsService.EndAvatarSessions), on behalf of the request
 * that deleted it (its id, when the delete came with one).
 */
export type EndAvatarSessions = (
  req: { avatarId: string; reason: SessionEndReason },
  requestId: string | undefined,
) => Promise<{ sessionIds: string[] }>;

export interface AvatarWriteDeps {
  endAvatarSessions?: EndAvatarSessions;
  /**
   * Tells the processes that cache avatars (the tokens service) that one changed; a change is answered
   * once this resolves, so the next mint does not meet the avatar as it was.
   */
  avatarChanged?: (avatarIds: readonly string[]) => Promise<void>;
  log: Logger;
}

type AvatarWriteRpcs = Pick<ServiceImpl<typeof CatalogService>, "updateAvatar" | "deleteAvatar">;

export const AVATAR_NAME_MAX = 64;

/**
 * Changes by the owner only: public catalog avatars belong to no space and are changed by import alone.
 * A deleted avatar is gone for every change (404), as for a second delete.
 */
export function avatarWriteRpcs(db: Kysely<CatalogDatabase>, deps: AvatarWriteDeps): AvatarWriteRpcs {
  const gone = () => notFound("Avatar not found", { field: "avatar_id" });

  async function ownAvatar(spaceId: string, avatarId: string) {
    const row = isUuid(avatarId) ? await repo.findAvatar(db, avatarId.toLowerCase()) : undefined;
    if (!row || row.space_id === null || row.space_id !== spaceId || row.status === "DELETED") throw gone();
    return row;
  }

  return {
    async updateAvatar(req) {
      const current = await ownAvatar(req.spaceId, req.avatarId);
      const changes: repo.AvatarChanges = {};
      if (req.name !== undefined) changes.name = checkAvatarName(req.name);
      if (req.defaultVoiceId !== undefined) {
        changes.default_voice_id = await visibleVoiceId(db, req.spaceId, req.defaultVoiceId);
      }
      if (req.isDeactivated !== undefined) changes.deactivate = req.isDeactivated;
      // An empty change answers the avatar as it is, without touching updated_at.
      if (Object.keys(changes).length === 0) return { avatar: avatarToProto(current) };
      if (!(await repo.updateAvatar(db, req.spaceId, current.id, changes))) throw gone();
      await deps.avatarChanged?.([current.id]);
      const row = await repo.findAvatar(db, current.id);
      if (!row) throw gone();
      return { avatar: avatarToProto(row) };
    },

    async deleteAvatar(req, ctx) {
      const current = await ownAvatar(req.spaceId, req.avatarId);
      if (!(await repo.markAvatarDeleted(db, req.spaceId, current.id))) throw gone();
      await deps.avatarChanged?.([current.id]);
      await endSessionsOn(current.id, deps, requestIdOf(ctx.values));
      const row = await repo.findAvatar(db, current.id);
      if (!row) throw gone();
      return { avatar: avatarToProto(row) };
    },
  };
}

function checkAvatarName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length === 0 || length > AVATAR_NAME_MAX) {
    throw invalidRequest(`name must have 1 to ${AVATAR_NAME_MAX} characters`, { field: "name" });
  }
  return trimmed;
}

async function visibleVoiceId(
  db: Kysely<CatalogDatabase>,
  spaceId: string,
  voiceId: string,
): Promise<string> {
  const voice = isUuid(voiceId) ? await repo.findVoice(db, voiceId.toLowerCase()) : undefined;
  if (!voice || !(voice.is_public || (voice.space_id !== null && voice.space_id === spaceId))) {
    throw notFound("Voice not found: default_voice_id", { field: "default_voice_id" });
  }
  return voice.id;
}

/**
 * Sessions on a deleted avatar end with AVATAR_DELETED. The avatar stays deleted when the sessions
 * service cannot be reached: that is logged, and the sessions end by their own timeouts.
 */
async function endSessionsOn(
  avatarId: string,
  deps: AvatarWriteDeps,
  requestId: string | undefined,
): Promise<void> {
  if (!deps.endAvatarSessions) return;
  const logged = { avatar_id: avatarId, ...(requestId ? { request_id: requestId } : {}) };
  try {
    const req = { avatarId, reason: SessionEndReason.AVATAR_DELETED };
    const ended = (await deps.endAvatarSessions(req, requestId)).sessionIds.length;
    if (ended > 0) deps.log.info("ended the sessions of a deleted avatar", { ...logged, ended });
  } catch (err) {
    deps.log.warn("could not end the sessions of a deleted avatar", { ...logged, err });
  }
}
