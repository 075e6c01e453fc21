import type { Bus } from "@avatar/bus";
import { type Clients, cachedGet, cacheInvalidations } from "@avatar/runtime";

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
 * should the message be lost (NATS down), the TTL bounds how long a replica keeps it (runtime's
 * cached-lookup.ts).
 */
export function cachedCatalog(catalog: CatalogLookup, bus: Bus | undefined): CatalogLookup {
  return {
    getAvatar: cachedGet(bus, cacheInvalidations.avatars, (req) => catalog.getAvatar(req), {
      id: "avatarId",
      value: "avatar",
    }),
    getVoice: cachedGet(bus, cacheInvalidations.voices, (req) => catalog.getVoice(req), {
      id: "voiceId",
      value: "voice",
    }),
  };
}
