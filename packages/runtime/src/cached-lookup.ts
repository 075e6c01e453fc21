import type { Bus } from "@avatar/bus";
import { InvalidatedCache } from "./invalidated-cache.js";

/**
 * How long a replica trusts a value it cached from another service (an avatar, a voice, a context, ...)
 * should that service's invalidation be lost.
 */
export const LOOKUP_CACHE_TTL_MS = 10_000;

/**
 * One cache of another service's lookup by `<id>|<asking space>` (the owner answers per space: a space
 * reads its own values and the public ones). An invalidation on `subject` names the id and drops it for
 * every space. Absence (NotFound, an empty answer) is not cached.
 */
function perSpace<V>(bus: Bus | undefined, subject: string) {
  const cache = new InvalidatedCache<V>(bus, subject, {
    ttlMs: LOOKUP_CACHE_TTL_MS,
    groupOf: (key) => key.slice(0, key.indexOf("|")),
  });
  return (spaceId: string, id: string, load: () => Promise<V | undefined>) =>
    cache.get(`${id.toLowerCase()}|${spaceId}`, load);
}

/**
 * Another service's Get RPC, cached with `perSpace` under the request's `spaceId` (none for a lookup by id
 * alone): `idOf` picks the id from the request, `has` says whether an answer holds a value (an empty one
 * is answered, not kept). A call's options (e.g. on whose behalf) go with the load it starts.
 */
export function cachedGet<Req extends object, Res, Opt = never>(
  bus: Bus | undefined,
  subject: string,
  get: (req: Req, options?: Opt) => Promise<Res>,
  idOf: (req: Req) => string | undefined,
  has: (res: Res) => boolean,
): (req: Req, options?: Opt) => Promise<Res> {
  const cache = perSpace<Res>(bus, subject);
  return async (req, options) => {
    const spaceId = "spaceId" in req && typeof req.spaceId === "string" ? req.spaceId : "";
    const found = await cache(spaceId, idOf(req) ?? "", async () => {
      const res = await get(req, options);
      return has(res) ? res : undefined;
    });
    return found ?? ({} as Res);
  };
}
