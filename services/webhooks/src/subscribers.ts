import type { Bus } from "@avatar/bus";
import { cacheInvalidations, InvalidatedCache } from "@avatar/runtime";
import type { Kysely } from "kysely";
import type { WebhooksDatabase } from "./schema.js";

/**
 * How long a replica trusts a space's cached endpoints. Every write invalidates at once, here and
 * through the bus; this bounds how long a lost invalidation (the bus's publish is at most once) can
 * leave another replica's cache stale.
 */
export const SUBSCRIBERS_TTL_MS = 5_000;
/** Spaces cached at once; beyond it the oldest entry goes. */
export const SUBSCRIBERS_MAX_SPACES = 10_000;

interface EnabledEndpoint {
  id: string;
  event_types: string[];
}

/**
 * The enabled endpoints of each space with their event types, as fan-out reads them on every event
 * (mostly to learn that nobody listens: a space without endpoints is cached too). Whoever writes a
 * space's endpoints calls `changed` once the write is committed.
 */
export interface Subscribers {
  /** The ids of the space's enabled endpoints subscribed to `type`. */
  of(spaceId: string, type: string): Promise<string[]>;
  changed(spaceId: string): void;
  close(): Promise<void>;
}

export function cachedSubscribers(
  db: Kysely<WebhooksDatabase>,
  bus: Bus | undefined,
  now: () => number = Date.now,
): Subscribers {
  const cache = new InvalidatedCache<EnabledEndpoint[]>(bus, cacheInvalidations.webhookEndpoints, {
    ttlMs: SUBSCRIBERS_TTL_MS,
    maxEntries: SUBSCRIBERS_MAX_SPACES,
    now,
  });
  const load = (spaceId: string) =>
    db
      .selectFrom("endpoints")
      .select(["id", "event_types"])
      .where("space_id", "=", spaceId)
      .where("disabled_at", "is", null)
      .execute();
  return {
    async of(spaceId, type) {
      const key = spaceId.toLowerCase();
      const endpoints = (await cache.get(key, () => load(key))) ?? [];
      return endpoints.filter((e) => e.event_types.includes(type)).map((e) => e.id);
    },
    changed: (spaceId) => cache.invalidate(spaceId.toLowerCase()),
    close: () => cache.close(),
  };
}
