import type { Bus } from "@avatar/bus";
import type { Avatar } from "@avatar/contracts/catalog";
import { type Clients, cacheInvalidations, InvalidatedCache } from "@avatar/runtime";

/** How long a replica trusts a cached avatar should the catalog's invalidation be lost. */
export const AVATAR_CACHE_TTL_MS = 10_000;

export type AvatarLookup = Pick<Clients["catalog"], "getAvatar">;

/**
 * The catalog's GetAvatar, cached per avatar and asking space (the catalog answers per space), for a
 * space's own avatars as for the public ones: every mint names one, and asking the catalog each time
 * cost a mint with a space's own avatar a call and a query (0.32 of the floor against 0.55-0.6 with a public
 * one, 2026-12-06). Whatever changes an avatar goes through the catalog (an owner's update or delete, an
 * operator's import), which announces it and answers the change only once the bus has passed that on
 * (publishInvalidation), so the mint that follows never meets the avatar as it was; should the message be
 * lost (NATS down), the TTL bounds how long a replica keeps it. Absence (NotFound) is not cached.
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
      const avatar = await cache.get(
        `${avatarId.toLowerCase()}|${spaceId}`,
        async () => (await catalog.getAvatar({ spaceId, avatarId })).avatar,
      );
      return { avatar } as Awaited<ReturnType<AvatarLookup["getAvatar"]>>;
    },
  };
}
