import type { Bus } from "@avatar/bus";
import { type Clients, cachedGet, cacheInvalidations } from "@avatar/runtime";

/**
 * What a mint asks of the agents service: a context, a voice agent, an LLM configuration, a secret's
 * type, and for a visitor's mint the embed.
 */
export type AgentsLookup = Pick<
  Clients["agents"],
  "getContext" | "getVoiceAgent" | "getLlmConfiguration" | "getSecret" | "getEmbed"
>;

/**
 * The agents service's lookups that a mint makes, cached per id and asking space as the catalog's are
 * (catalog-cache.ts): a FULL mint's context, voice agent or LLM configuration, a LITE mint's provider key
 * and a visitor's embed were each asked of the agents service at every mint. The agents service announces
 * every update and delete of them and answers it only once the bus has passed that on, so the mint that
 * follows never meets the old value. A secret's answer holds its name and type, never its value.
 */
export function cachedAgents(agents: AgentsLookup, bus: Bus | undefined): AgentsLookup {
  return {
    getContext: cachedGet(bus, cacheInvalidations.contexts, (req) => agents.getContext(req), {
      id: "contextId",
      value: "context",
    }),
    getVoiceAgent: cachedGet(bus, cacheInvalidations.voiceAgents, (req) => agents.getVoiceAgent(req), {
      id: "voiceAgentId",
      value: "voiceAgent",
    }),
    getLlmConfiguration: cachedGet(
      bus,
      cacheInvalidations.llmConfigurations,
      (req) => agents.getLlmConfiguration(req),
      { id: "llmConfigurationId", value: "llmConfiguration" },
    ),
    getSecret: cachedGet(bus, cacheInvalidations.secrets, (req) => agents.getSecret(req), {
      id: "secretId",
      value: "secret",
    }),
    // Embeds are read by id alone (a visitor has no space): cached under no space.
    getEmbed: cachedGet(bus, cacheInvalidations.embeds, (req) => agents.getEmbed(req), {
      id: "embedId",
      value: "embed",
    }),
  };
}
