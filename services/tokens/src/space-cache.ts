import type { Bus } from "@avatar/bus";
import { cacheInvalidations, InvalidatedCache } from "@avatar/runtime";
import type { Kysely } from "kysely";
import * as repo from "./repository.js";
import type { SpaceRow, TokensDatabase } from "./schema.js";

/** How long a replica trusts a cached space should an invalidation be lost. */
export const SPACE_CACHE_TTL_MS = 10_000;

/** Spaces as minting reads them (tier and duration limit), cached; `changed` after every update. */
export interface SpaceLookup {
  find(id: string): Promise<SpaceRow | undefined>;
  changed(id: string): void;
}

export function cachedSpaces(db: Kysely<TokensDatabase>, bus: Bus | undefined): SpaceLookup {
  const cache = new InvalidatedCache<SpaceRow>(bus, cacheInvalidations.spaces, { ttlMs: SPACE_CACHE_TTL_MS });
  return {
    find: (id) => cache.get(id.toLowerCase(), () => repo.findSpace(db, id)),
    changed: (id) => cache.invalidate(id.toLowerCase()),
  };
}
