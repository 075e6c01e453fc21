import type { VendorBAgentConfiguration, VoiceAgent } from "@avatar/contracts/agents";
import {
  AgentType,
  type LiteConfigsSchema,
  type SessionRequest,
  type VoiceAgentRef,
} from "@avatar/contracts/common";
import { invalidRequest } from "@avatar/runtime";
import type { AgentsLookup } from "./agents-cache.js";
import { asVariables, checkOverrideVariables, mergeVariables } from "./dynamic-variables.js";
import { givenId, lookup } from "./lookup.js";
import type { PlainInit } from "./proto-init.js";
import type { ConversationInput } from "./resolve-conversation.js";
import { DEFAULT_LANGUAGE } from "./voice-settings.js";
import { agentTypeName } from "./wire-names.js";

/** A stored voice agent turned into what the session runs: our FULL pipeline, or a LITE agent. */
export type AgentPlan =
  | { kind: "full"; agent: VoiceAgent; input: ConversationInput }
  | {
      kind: "lite";
      agent: VoiceAgent;
      lite: PlainInit<typeof LiteConfigsSchema>;
      /** The context a realtime agent runs with, if any. */
      contextId: string | undefined;
    };

const AGENT = "voice_agent.id";

/** A stored vendorB agent's realtime settings with the interface's defaults where none were stored. */
function vendorBDefaults(c: VendorBAgentConfiguration) {
  const model = c.model || "gpt-realtime";
  const fullDuplex = model === "gpt-live-1";
  return {
    model,
    voice: c.voice || (fullDuplex ? "marin" : "alloy"),
    // The full-duplex family has no temperature: 0 stands for "not applicable".
    temperature: fullDuplex ? 0 : c.temperature || 0.8,
    secretId: c.secretId,
    contextId: c.contextId,
  };
}

/**
 * Resolves `voice_agent` (interface.md rules 1-4, contract section 4). A managed agent runs FULL with the
 * reference's language and dynamic_variables over its stored ones; the other types run LITE and take no
 * per-session overrides. Memory and a custom LLM configuration belong to the managed pipeline too.
 */
export async function resolveAgent(
  agents: Pick<AgentsLookup, "getVoiceAgent">,
  spaceId: string,
  request: SessionRequest,
  ref: VoiceAgentRef,
): Promise<AgentPlan> {
  const agent = await lookup(ref.id, { field: AGENT, message: "Voice agent not found" }, async () => {
    return (await agents.getVoiceAgent({ spaceId, voiceAgentId: ref.id })).voiceAgent;
  });
  const config = agent.agentConfiguration?.configuration;

  if (agent.agentType === AgentType.MANAGED_AGENT && config?.case === "managed") {
    const stored = config.value;
    const overrides = ref.dynamicVariables
      ? checkOverrideVariables(ref.dynamicVariables, "voice_agent.dynamic_variables")
      : asVariables(request.dynamicVariables);
    return {
      kind: "full",
      agent,
      input: {
        voiceId: givenId(stored.voiceId),
        contextId: givenId(stored.contextId),
        language: ref.language || stored.language || DEFAULT_LANGUAGE,
        voiceSettings: stored.voiceSettings,
        sttConfig: stored.sttConfig,
        llmSettings: stored.llmSettings,
        llmConfigurationId: givenId(request.llmConfigurationId) ?? givenId(stored.llmConfigurationId),
        vars: mergeVariables(asVariables(stored.dynamicVariables), overrides),
        fields: {
          voiceId: AGENT,
          contextId: AGENT,
          language: ref.language !== undefined ? "voice_agent.language" : AGENT,
          voiceProvider: AGENT,
          textNormalization: ref.language !== undefined ? "voice_agent.language" : AGENT,
          llmConfigurationId: request.llmConfigurationId !== undefined ? "llm_configuration_id" : AGENT,
        },
      },
    };
  }

  const type = agentTypeName(agent.agentType) ?? "unknown";
  if (ref.language !== undefined) {
    throw invalidRequest(`voice_agent.language does not apply to a ${type} voice agent`, {
      field: "voice_agent.language",
    });
  }
  if (ref.dynamicVariables) {
    throw invalidRequest(`voice_agent.dynamic_variables does not apply to a ${type} voice agent`, {
      field: "voice_agent.dynamic_variables",
    });
  }
  if (request.memory && (request.memory.prevSessionId || request.memory.sessionMemoryId)) {
    throw invalidRequest(`memory applies to FULL sessions only; a ${type} voice agent runs LITE`, {
      field: "memory",
    });
  }
  if (request.llmConfigurationId !== undefined) {
    throw invalidRequest(`llm_configuration_id does not apply to a ${type} voice agent`, {
      field: "llm_configuration_id",
    });
  }

  if (agent.agentType === AgentType.VENDOR_A_AGENT && config?.case === "vendorA") {
    const { secretId, agentId, voiceId } = config.value;
    return {
      kind: "lite",
      agent,
      lite: { vendorAAgent: { secretId, agentId, voiceId } },
      contextId: undefined,
    };
  }
  if (agent.agentType === AgentType.VENDOR_D_AGENT && config?.case === "vendorD") {
    const { secretId, agentId } = config.value;
    return { kind: "lite", agent, lite: { vendorDAgent: { secretId, agentId } }, contextId: undefined };
  }
  if (agent.agentType === AgentType.VENDOR_B_AGENT && config?.case === "vendorB") {
    return {
      kind: "lite",
      agent,
      lite: { vendorBRealtime: vendorBDefaults(config.value) },
      contextId: givenId(config.value.contextId),
    };
  }
  throw invalidRequest(`voice agent ${agent.id} has no usable configuration for its type ${type}`, {
    field: AGENT,
  });
}
