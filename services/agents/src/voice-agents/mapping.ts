import {
  type AgentConfiguration,
  AgentConfigurationSchema,
  type VoiceAgent,
  VoiceAgentSchema,
} from "@avatar/contracts/agents";
import { AgentType, LlmSettingsSchema } from "@avatar/contracts/common";
import { toTimestamp } from "@avatar/runtime";
import { create, fromJson, type JsonObject, toJson } from "@bufbuild/protobuf";
import type { AgentTypeValue, VoiceAgentRow } from "../schema.js";

export const agentTypeToProto: Record<AgentTypeValue, AgentType> = {
  managed_agent: AgentType.MANAGED_AGENT,
  vendorA_agent: AgentType.VENDOR_A_AGENT,
  vendorD_agent: AgentType.VENDOR_D_AGENT,
  vendorB_agent: AgentType.VENDOR_B_AGENT,
};

export function agentTypeFromProto(type: AgentType): AgentTypeValue | undefined {
  return (Object.entries(agentTypeToProto) as [AgentTypeValue, AgentType][]).find(([, v]) => v === type)?.[0];
}

/** The configuration case each agent type takes. */
export const configurationCase = {
  managed_agent: "managed",
  vendorA_agent: "vendorA",
  vendorD_agent: "vendorD",
  vendorB_agent: "vendorB",
} as const satisfies Record<AgentTypeValue, NonNullable<AgentConfiguration["configuration"]["case"]>>;

/** The managed default model: what a managed agent stored without LLM settings runs. */
export const DEFAULT_LLM_SETTINGS = { provider: "vendorB", model: "gpt-5.4-nano" } as const;

export function configurationToJson(config: AgentConfiguration): Record<string, unknown> {
  return toJson(AgentConfigurationSchema, config, { useProtoFieldName: true }) as Record<string, unknown>;
}

export function configurationFromJson(json: Record<string, unknown>): AgentConfiguration {
  return fromJson(AgentConfigurationSchema, json as JsonObject);
}

/** The stored agent as callers see it: a managed agent without LLM settings reads back with the default. */
export function voiceAgentToProto(row: VoiceAgentRow): VoiceAgent {
  const configuration = configurationFromJson(row.configuration);
  if (configuration.configuration.case === "managed" && !configuration.configuration.value.llmSettings) {
    configuration.configuration.value.llmSettings = create(LlmSettingsSchema, DEFAULT_LLM_SETTINGS);
  }
  return create(VoiceAgentSchema, {
    id: row.id,
    spaceId: row.space_id,
    name: row.name,
    agentType: agentTypeToProto[row.agent_type],
    agentConfiguration: configuration,
    isPublic: row.is_public,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}
