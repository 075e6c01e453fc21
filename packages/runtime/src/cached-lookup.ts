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

/** The keys of `T` whose values are strings (a request's id fields). */
type StringKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends string ? K : never }[keyof T];

/**
 * Another service's Get RPC, cached with `perSpace` under the request's `spaceId` (none for a lookup by id
 * alone): `id` names the request's id field, `value` the answer's field that holds what was found (an
 * answer without it is answered, not kept). A call's options (e.g. on whose behalf) go with the load it
 * starts.
 */
export function cachedGet<Req extends object, Res extends object, Opt = never>(
  bus: Bus | undefined,
  subject: string,
  get: (req: Req, options?: Opt) => Promise<Res>,
  fields: { id: StringKeys<Req>; value: keyof Res },
): (req: Req, options?: Opt) => Promise<Res> {
  const cache = perSpace<Res>(bus, subject);
  return async (req, options) => {
    const spaceId = "spaceId" in req && typeof req.spaceId === "string" ? req.spaceId : "";
    const id = req[fields.id];
    const found = await cache(spaceId, typeof id === "string" ? id : "", async () => {
      const res = await get(req, options);
      return res[fields.value] !== undefined ? res : undefined;
    });
    return found ?? ({} as Res);
  };
}
