import { AgentsService } from "@avatar/contracts/agents";
import {
  cacheInvalidations,
  changeAnnouncer,
  readSecretDestinations,
  type ServiceApp,
  type ServiceDeps,
  type ServiceModule,
  sealerFromEnv,
} from "@avatar/runtime";
import { migrations } from "./migrations/index.js";
import type { AgentsDatabase } from "./schema.js";
import { agentsService } from "./service.js";

export type { AgentsDatabase } from "./schema.js";
export { type AgentsServiceDeps, agentsService } from "./service.js";

/** Builds the agents service: contexts, voice agents, secrets (sealed), LLM configurations, embeds. */
export async function build(deps: ServiceDeps<AgentsDatabase>): Promise<ServiceApp> {
  const service = agentsService({
    db: deps.db,
    catalog: deps.clients.catalog,
    sealer: sealerFromEnv("agents", deps.env, deps.log),
    log: deps.log,
    destinations: readSecretDestinations(deps.env),
    changes: {
      contexts: announce(deps, cacheInvalidations.contexts, "context_id"),
      voiceAgents: announce(deps, cacheInvalidations.voiceAgents, "voice_agent_id"),
      llmConfigurations: announce(deps, cacheInvalidations.llmConfigurations, "llm_configuration_id"),
      secrets: announce(deps, cacheInvalidations.secrets, "secret_id"),
      embeds: announce(deps, cacheInvalidations.embeds, "embed_id"),
    },
  });
  return { name: "agents", routes: (router) => router.service(AgentsService, service) };
}

const announce = (deps: ServiceDeps<AgentsDatabase>, subject: string, field: string) =>
  changeAnnouncer(deps.bus, deps.log, subject, field);

export const agentsModule: ServiceModule<AgentsDatabase> = { name: "agents", migrations, build };
