import type { Bus } from "@avatar/bus";
import type { Avatar, Voice } from "@avatar/contracts/catalog";
import { type Clients, cacheInvalidations, InvalidatedCache } from "@avatar/runtime";

/** How long a replica trusts a cached avatar or voice should the catalog's invalidation be lost. */
export const CATALOG_CACHE_TTL_MS = 10_000;

/** What a mint asks of the catalog for every session: the avatar, and in FULL its voice. */
export type CatalogLookup = Pick<Clients["catalog"], "getAvatar" | "getVoice">;
export type AvatarLookup = Pick<CatalogLookup, "getAvatar">;

/**
 * The catalog's GetAvatar and GetVoice, cached per id and asking space (the catalog answers per space),
 * a space's own avatars as well as the public ones: every mint names an avatar, and asking the catalog
 * each time cost a mint with a space's own avatar a call and a query (0.32 of the floor against 0.55-0.6
 * with a public one, 2026-12-06). Whatever changes an avatar or a voice goes through the catalog (an
 * owner's update or delete, an operator's import), which announces it and answers the change only once
 * the bus has passed that on (publishInvalidation), so the mint that follows never meets the old value;
 * should the message be lost (NATS down), the TTL bounds how long a replica keeps it. Absence (NotFound)
 * is not cached.
 */
export function cachedCatalog(catalog: CatalogLookup, bus: Bus | undefined): CatalogLookup {
  const avatars = perSpace<Avatar>(bus, cacheInvalidations.avatars);
  const voices = perSpace<Voice>(bus, cacheInvalidations.voices);
  return {
    getAvatar: async (req) => {
      const spaceId = req.spaceId ?? "";
      const avatarId = req.avatarId ?? "";
      const avatar = await avatars(
        spaceId,
        avatarId,
        async () => (await catalog.getAvatar({ spaceId, avatarId })).avatar,
      );
      return { avatar } as Awaited<ReturnType<CatalogLookup["getAvatar"]>>;
    },
    getVoice: async (req) => {
      const spaceId = req.spaceId ?? "";
      const voiceId = req.voiceId ?? "";
      const voice = await voices(
        spaceId,
        voiceId,
        async () => (await catalog.getVoice({ spaceId, voiceId })).voice,
      );
      return { voice } as Awaited<ReturnType<CatalogLookup["getVoice"]>>;
    },
  };
}

/** One cache of a catalog lookup by `<id>|<space>`; an invalidation names the id and drops it for every space. */
function perSpace<V>(bus: Bus | undefined, subject: string) {
  const cache = new InvalidatedCache<V>(bus, subject, {
    ttlMs: CATALOG_CACHE_TTL_MS,
    groupOf: (key) => key.slice(0, key.indexOf("|")),
  });
  return (spaceId: string, id: string, load: () => Promise<V | undefined>) =>
    cache.get(`${id.toLowerCase()}|${spaceId}`, load);
}
