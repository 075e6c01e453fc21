import type { AgentsService } from "@avatar/contracts/agents";
import {
  invalidRequest,
  isUuid,
  type Logger,
  readSecretDestinations,
  type Sealer,
  type SecretDestinations,
} from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AgentsChanges } from "./changes.js";
import { contextRpcs } from "./contexts/service.js";
import { embedRpcs } from "./embeds/service.js";
import { llmConfigurationRpcs } from "./llm-configurations/service.js";
import type { CatalogClient } from "./references.js";
import type { Db } from "./schema.js";
import { secretRpcs } from "./secrets/service.js";
import { voiceAgentRpcs } from "./voice-agents/service.js";

export interface AgentsServiceDeps {
  db: Db;
  catalog: CatalogClient;
  sealer: Sealer;
  log: Logger;
  /** Where each secret may be sent (the provider URLs of the environment); only bound hosts without it. */
  destinations?: SecretDestinations;
  /** Announces updates and deletes to the processes that cache them; answered before the RPC is. */
  changes?: AgentsChanges;
}

type Impl = ServiceImpl<typeof AgentsService>;

/** Every RPC of AgentsService; each resource's RPCs live beside its repository. */
export function agentsService(deps: AgentsServiceDeps): Impl {
  const resolve = { db: deps.db, catalog: deps.catalog };
  const changes = deps.changes ?? {};
  return withSpaceIds({
    ...contextRpcs(deps.db, changes.contexts),
    ...voiceAgentRpcs(resolve, changes.voiceAgents),
    ...secretRpcs(deps.db, deps.sealer, deps.log, changes.secrets),
    ...llmConfigurationRpcs(
      deps.db,
      deps.destinations ?? readSecretDestinations({}),
      changes.llmConfigurations,
    ),
    ...embedRpcs(resolve, changes.embeds),
  });
}

/**
 * Every request that names a space must name it by UUID (it is compared with stored ids and reaches
 * uuid columns); it is taken in lower case, as ids are stored.
 */
function withSpaceIds(impl: Impl): Impl {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(impl) as [string, (req: unknown, ctx: unknown) => unknown][]) {
    wrapped[name] = async (req: { spaceId?: unknown }, ctx: unknown) => {
      if (typeof req.spaceId === "string") {
        if (!isUuid(req.spaceId)) throw invalidRequest("space_id must be a UUID", { field: "space_id" });
        req.spaceId = req.spaceId.toLowerCase();
      }
      return fn(req, ctx);
    };
  }
  return wrapped as unknown as Impl;
}
