import { type Route, route } from "../http/route.js";
import * as contexts from "./contexts.js";
import * as embeds from "./embeds.js";
import * as llm from "./llm-configurations.js";
import * as secrets from "./secrets.js";
import * as agents from "./voice-agents.js";
import { createVoiceAgentBody, updateVoiceAgentBody } from "./voice-agents.schema.js";

const common = { auth: "api_key", rateLimit: "default" } as const;

/** Contexts, voice agents, secrets, LLM configurations and embeds (API key; another space's: 404). */
export const agentsRoutes: Route[] = [
  route({
    ...common,
    method: "POST",
    path: "/v1/contexts",
    summary: "Create a context",
    body: contexts.createContextBody,
    handle: contexts.createContext,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/contexts",
    summary: "List the space's contexts",
    query: contexts.contextListQuery,
    handle: contexts.listContexts,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/contexts/{context_id}",
    summary: "Get a context with its required dynamic variables",
    params: contexts.contextPath,
    handle: contexts.getContext,
  }),
  route({
    ...common,
    method: "PATCH",
    path: "/v1/contexts/{context_id}",
    summary: "Change a context",
    params: contexts.contextPath,
    body: contexts.updateContextBody,
    handle: contexts.updateContext,
  }),
  route({
    ...common,
    method: "DELETE",
    path: "/v1/contexts/{context_id}",
    summary: "Delete a context",
    params: contexts.contextPath,
    handle: contexts.deleteContext,
  }),
  route({
    ...common,
    method: "POST",
    path: "/v1/contexts/{context_id}/copy",
    summary: "Copy a readable context into the space as a private context",
    params: contexts.contextPath,
    body: contexts.copyContextBody,
    optionalBody: true,
    handle: contexts.copyContext,
  }),

  route({
    ...common,
    method: "POST",
    path: "/v1/voice_agents",
    summary: "Create a voice agent",
    body: createVoiceAgentBody,
    handle: agents.createVoiceAgent,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/voice_agents",
    summary: "List voice agents: the space's own (private) or every public one",
    query: agents.voiceAgentListQuery,
    handle: agents.listVoiceAgents,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/voice_agents/{agent_id}",
    summary: "Get a voice agent with its agent_configuration",
    params: agents.voiceAgentPath,
    handle: agents.getVoiceAgent,
  }),
  route({
    ...common,
    method: "PATCH",
    path: "/v1/voice_agents/{agent_id}",
    summary: "Change a voice agent of the space",
    params: agents.voiceAgentPath,
    body: updateVoiceAgentBody,
    handle: agents.updateVoiceAgent,
  }),
  route({
    ...common,
    method: "DELETE",
    path: "/v1/voice_agents/{agent_id}",
    summary: "Delete a voice agent of the space",
    params: agents.voiceAgentPath,
    handle: agents.deleteVoiceAgent,
  }),

  route({
    ...common,
    method: "POST",
    path: "/v1/secrets",
    summary: "Store a provider key (any region of the provider)",
    body: secrets.createSecretBody,
    handle: secrets.createSecret,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/secrets",
    summary: "List the space's secrets (never their values)",
    handle: secrets.listSecrets,
  }),
  route({
    ...common,
    method: "DELETE",
    path: "/v1/secrets/{secret_id}",
    summary: "Delete a secret",
    params: secrets.secretPath,
    handle: secrets.deleteSecret,
  }),

  route({
    ...common,
    method: "POST",
    path: "/v1/llm-configurations",
    summary: "Create an LLM configuration (any OpenAI-compatible endpoint)",
    body: llm.createLlmConfigurationBody,
    handle: llm.createLlmConfiguration,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/llm-configurations",
    summary: "List the space's LLM configurations",
    handle: llm.listLlmConfigurations,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/llm-configurations/{llm_configuration_id}",
    summary: "Get an LLM configuration",
    params: llm.llmConfigurationPath,
    handle: llm.getLlmConfiguration,
  }),
  route({
    ...common,
    method: "PATCH",
    path: "/v1/llm-configurations/{llm_configuration_id}",
    summary: "Change an LLM configuration",
    params: llm.llmConfigurationPath,
    body: llm.updateLlmConfigurationBody,
    handle: llm.updateLlmConfiguration,
  }),
  route({
    ...common,
    method: "DELETE",
    path: "/v1/llm-configurations/{llm_configuration_id}",
    summary: "Delete an LLM configuration",
    params: llm.llmConfigurationPath,
    handle: llm.deleteLlmConfiguration,
  }),

  route({
    ...common,
    method: "POST",
    path: "/v2/embeddings",
    summary: "Create an embed: a web page that runs sessions with an avatar",
    body: embeds.createEmbedBody,
    handle: embeds.createEmbed,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v2/embeddings/{embed_id}",
    summary: "Get an embed of the space with its visitor limits",
    params: embeds.embedPath,
    handle: embeds.getEmbed,
  }),
  route({
    ...common,
    method: "PATCH",
    path: "/v2/embeddings/{embed_id}",
    summary: "Change an embed's visitor limits and allowed origins, or disable it",
    params: embeds.embedPath,
    body: embeds.updateEmbedBody,
    handle: embeds.updateEmbed,
  }),
];
