import { CatalogService } from "@avatar/contracts/catalog";
import {
  cacheInvalidations,
  onBehalfOf,
  publishInvalidation,
  type ServiceApp,
  type ServiceDeps,
  type ServiceModule,
} from "@avatar/runtime";
import { migrations } from "./migrations/index.js";
import type { CatalogDatabase } from "./schema.js";
import { readCatalogFile, seedCatalog } from "./seed.js";
import { catalogService } from "./service.js";

export type { AvatarWriteDeps, EndAvatarSessions } from "./avatar-writes.js";
export { lookSeedOf } from "./look-seed.js";
export type { CatalogDatabase } from "./schema.js";
export { type CatalogFile, readCatalogFile, type SeedAvatar } from "./seed.js";
export { catalogService } from "./service.js";

/** Builds the catalog service: seeds the catalog file, then serves CatalogService. */
export async function build(deps: ServiceDeps<CatalogDatabase>): Promise<ServiceApp> {
  await seedCatalog(deps.db, readCatalogFile(deps.env.CATALOG_FILE || undefined));
  return {
    name: "catalog",
    routes: (router) =>
      router.service(
        CatalogService,
        catalogService(deps.db, {
          // Resolved at call time: a catalog process without SESSIONS_URL still serves everything else.
          endAvatarSessions: (req, requestId) =>
            deps.clients.sessions.endAvatarSessions(req, onBehalfOf(requestId)),
          // The write stands when the bus cannot confirm the invalidation: the caches' TTL bounds it.
          avatarChanged: (avatarId) =>
            publishInvalidation(deps.bus, cacheInvalidations.avatars, avatarId).catch((err: unknown) =>
              deps.log.warn("could not confirm that avatar caches heard of a change", {
                avatar_id: avatarId,
                err,
              }),
            ),
          log: deps.log,
        }),
      ),
  };
}

export const catalogModule: ServiceModule<CatalogDatabase> = { name: "catalog", migrations, build };
