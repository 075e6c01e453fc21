import { CatalogService } from "@avatar/contracts/catalog";
import {
  cacheInvalidations,
  changeAnnouncer,
  onBehalfOf,
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
          // Answered once the processes that cache avatars or voices (the tokens service) heard of it.
          avatarChanged: changeAnnouncer(deps.bus, deps.log, cacheInvalidations.avatars, "avatar_id"),
          voiceChanged: changeAnnouncer(deps.bus, deps.log, cacheInvalidations.voices, "voice_id"),
          log: deps.log,
        }),
      ),
  };
}

export const catalogModule: ServiceModule<CatalogDatabase> = { name: "catalog", migrations, build };
