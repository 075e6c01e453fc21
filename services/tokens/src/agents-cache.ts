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
 * (catalog-cache.ts): a FULL mint with a context, a voice agent or an LLM configuration, and a LITE mint
 * with a provider's key, and every visitor's mint of an embed, each asked the agents service at every mint. The agents service announces every
 * update and delete of them and answers it only once the bus has passed that on, so the mint that
 * follows never meets the old value. A secret's answer holds its name and type, never its value.
 */
export function cachedAgents(agents: AgentsLookup, bus: Bus | undefined): AgentsLookup {
  return {
    getContext: cachedGet(
      bus,
      cacheInvalidations.contexts,
      (req) => agents.getContext(req),
      (req) => req.contextId,
      (res) => res.context !== undefined,
    ),
    getVoiceAgent: cachedGet(
      bus,
      cacheInvalidations.voiceAgents,
      (req) => agents.getVoiceAgent(req),
      (req) => req.voiceAgentId,
      (res) => res.voiceAgent !== undefined,
    ),
    getLlmConfiguration: cachedGet(
      bus,
      cacheInvalidations.llmConfigurations,
      (req) => agents.getLlmConfiguration(req),
      (req) => req.llmConfigurationId,
      (res) => res.llmConfiguration !== undefined,
    ),
    getSecret: cachedGet(
      bus,
      cacheInvalidations.secrets,
      (req) => agents.getSecret(req),
      (req) => req.secretId,
      (res) => res.secret !== undefined,
    ),
    // Embeds are read by id alone (a visitor has no space): cached under no space.
    getEmbed: cachedGet(
      bus,
      cacheInvalidations.embeds,
      (req) => agents.getEmbed(req),
      (req) => req.embedId,
      (res) => res.embed !== undefined,
    ),
  };
}
