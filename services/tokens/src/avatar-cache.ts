import type { Bus } from "@avatar/bus";
import type { Avatar } from "@avatar/contracts/catalog";
import { type Clients, cacheInvalidations, InvalidatedCache } from "@avatar/runtime";

/** How long a replica trusts a cached avatar should the catalog's invalidation be lost. */
export const AVATAR_CACHE_TTL_MS = 10_000;

export type AvatarLookup = Pick<Clients["catalog"], "getAvatar">;

/**
 * The catalog's GetAvatar with the public catalog avatars cached (per avatar and asking space, as the
 * catalog answers per space). Public avatars belong to no space: no API call changes or deletes them,
 * only an operator's import, and the catalog then sends an invalidation; the TTL bounds a lost one.
 * Every other avatar (a space's own, which its owner may deactivate or delete at any moment) is asked
 * for every time.
 */
export function cachedAvatars(catalog: AvatarLookup, bus: Bus | undefined): AvatarLookup {
  const cache = new InvalidatedCache<Avatar>(bus, cacheInvalidations.avatars, {
    ttlMs: AVATAR_CACHE_TTL_MS,
    groupOf: (key) => key.slice(0, key.indexOf("|")),
  });
  return {
    getAvatar: async (req) => {
      const spaceId = req.spaceId ?? "";
      const avatarId = req.avatarId ?? "";
      let answer: Avatar | undefined;
      const publicAvatar = await cache.get(`${avatarId.toLowerCase()}|${spaceId}`, async () => {
        answer = (await catalog.getAvatar({ spaceId, avatarId })).avatar;
        return answer?.isPublic ? answer : undefined;
      });
      // A caller that joined another caller's load of a private avatar asks for itself.
      const avatar = publicAvatar ?? answer ?? (await catalog.getAvatar({ spaceId, avatarId })).avatar;
      return { avatar } as Awaited<ReturnType<AvatarLookup["getAvatar"]>>;
    },
  };
}
