import { type AgentConfigurationSchema, VoiceAgentScope } from "@avatar/contracts/agents";
import { AgentType, type VoiceSettingsSchema } from "@avatar/contracts/common";
import { fromJson, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { HttpError } from "../http/http-error.js";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentVoiceAgent } from "../present/agents.js";
import * as s from "../schema/index.js";
import {
  type AgentConfigurationValue,
  type AgentTypeName,
  validateConfiguration,
} from "./agent-configuration.js";
import { spaceOf } from "./principal.js";
import type { VoiceSettings } from "./session-token.schema.js";
import type { createVoiceAgentBody, updateVoiceAgentBody, VoiceAgentBody } from "./voice-agents.schema.js";

/** Stored voice agents. Public ones are readable by every space and changeable by their owner only. */

export const voiceAgentPath = s.path({ agent_id: s.uuid() });
export const voiceAgentListQuery = s.query({
  scope: s.enumOf(["private", "public"]).default("private"),
});

const agentTypes: Record<AgentTypeName, AgentType> = {
  managed_agent: AgentType.MANAGED_AGENT,
  vendorA_agent: AgentType.VENDOR_A_AGENT,
  vendorD_agent: AgentType.VENDOR_D_AGENT,
  vendorB_agent: AgentType.VENDOR_B_AGENT,
};
const typeNames = Object.fromEntries(Object.entries(agentTypes).map(([k, v]) => [v, k])) as Record<
  AgentType,
  AgentTypeName | undefined
>;

type ConfigurationInit = MessageInitShape<typeof AgentConfigurationSchema>;

function voiceSettings(v: s.Infer<typeof VoiceSettings>): MessageInitShape<typeof VoiceSettingsSchema> {
  switch (v.provider) {
    case "vendorA":
      return {
        provider: {
          case: "vendorA",
          value: {
            speed: v.speed,
            stability: v.stability,
            similarityBoost: v.similarity_boost,
            style: v.style,
            useSpeakerBoost: v.use_speaker_boost,
            model: v.model,
            applyLanguageTextNormalization: v.apply_language_text_normalization,
          },
        },
      };
    case "vendorE":
      return {
        provider: { case: "vendorE", value: { speed: v.speed, model: v.model, latencyMode: v.latency_mode } },
      };
    case "vendorD":
      return { provider: { case: "vendorD", value: { speed: v.speed, model: v.model } } };
  }
}

const orUndefined = <T>(value: T | null | undefined): T | undefined => value ?? undefined;

/** A validated configuration as the proto message; JSON null reads as absent. */
export function toConfiguration(c: AgentConfigurationValue): ConfigurationInit {
  switch (c.type) {
    case "managed_agent": {
      const m = c.value;
      return {
        configuration: {
          case: "managed",
          value: {
            voiceId: orUndefined(m.voice_id),
            contextId: orUndefined(m.context_id),
            language: orUndefined(m.language),
            voiceSettings: m.voice_settings ? voiceSettings(m.voice_settings) : undefined,
            sttConfig: m.stt_config ? { provider: m.stt_config.provider } : undefined,
            llmSettings: m.llm_settings
              ? { provider: m.llm_settings.provider, model: m.llm_settings.model }
              : undefined,
            llmConfigurationId: orUndefined(m.llm_configuration_id),
            dynamicVariables: m.dynamic_variables
              ? {
                  values: Object.fromEntries(
                    Object.entries(m.dynamic_variables).map(([k, v]) => [k, fromJson(ValueSchema, v)]),
                  ),
                }
              : undefined,
          },
        },
      };
    }
    case "vendorA_agent":
      return {
        configuration: {
          case: "vendorA",
          value: {
            secretId: c.value.secret_id,
            agentId: c.value.agent_id,
            voiceId: orUndefined(c.value.voice_id),
          },
        },
      };
    case "vendorD_agent":
      return {
        configuration: { case: "vendorD", value: { secretId: c.value.secret_id, agentId: c.value.agent_id } },
      };
    case "vendorB_agent":
      return {
        configuration: {
          case: "vendorB",
          value: {
            model: c.value.model,
            // Empty and zero stand for "the default": the agents service applies the family's.
            voice: c.value.voice ?? "",
            temperature: c.value.temperature ?? 0,
            secretId: c.value.secret_id,
            contextId: c.value.context_id,
          },
        },
      };
  }
}

type Ctx<P = unknown, Q = unknown, B = undefined> = RequestContext<P, Q, B>;
type PathCtx<B = undefined> = Ctx<s.Infer<typeof voiceAgentPath>, unknown, B>;

export async function createVoiceAgent(
  ctx: Ctx<unknown, unknown, s.Infer<typeof createVoiceAgentBody>>,
): Promise<RouteResult> {
  const b = ctx.body;
  const { voiceAgent } = await ctx.clients.agents.createVoiceAgent({
    spaceId: spaceOf(ctx.principal),
    name: b.name ?? "",
    agentType: b.agent_type ? agentTypes[b.agent_type] : AgentType.UNSPECIFIED,
    agentConfiguration: b.configuration ? toConfiguration(b.configuration) : undefined,
    isPublic: b.is_public ?? false,
  });
  return { data: voiceAgent ? presentVoiceAgent(voiceAgent, true) : null };
}

export async function listVoiceAgents(
  ctx: Ctx<unknown, s.Infer<typeof voiceAgentListQuery>>,
): Promise<RouteResult> {
  const { voiceAgents } = await ctx.clients.agents.listVoiceAgents({
    spaceId: spaceOf(ctx.principal),
    scope: ctx.query.scope === "public" ? VoiceAgentScope.PUBLIC : VoiceAgentScope.PRIVATE,
  });
  return { data: voiceAgents.map((a) => presentVoiceAgent(a, false)) };
}

export async function getVoiceAgent(ctx: PathCtx): Promise<RouteResult> {
  const { voiceAgent } = await ctx.clients.agents.getVoiceAgent({
    spaceId: spaceOf(ctx.principal),
    voiceAgentId: ctx.params.agent_id,
  });
  return { data: voiceAgent ? presentVoiceAgent(voiceAgent, true) : null };
}

export async function updateVoiceAgent(
  ctx: PathCtx<s.Infer<typeof updateVoiceAgentBody>>,
): Promise<RouteResult> {
  const spaceId = spaceOf(ctx.principal);
  const b = ctx.body;
  const configuration = b.configuration ?? (await untypedConfiguration(ctx, b));
  const { voiceAgent } = await ctx.clients.agents.updateVoiceAgent({
    spaceId,
    voiceAgentId: ctx.params.agent_id,
    name: b.name,
    agentType: b.agent_type ? agentTypes[b.agent_type] : AgentType.UNSPECIFIED,
    agentConfiguration: configuration ? toConfiguration(configuration) : undefined,
    isPublic: b.is_public,
  });
  return { data: voiceAgent ? presentVoiceAgent(voiceAgent, true) : null };
}

/**
 * A configuration sent without agent_type is the stored agent's type's: validated once that type is
 * known (the agent is read first, so another space's agent is a 404 before any 422).
 */
async function untypedConfiguration(
  ctx: Pick<PathCtx<unknown>, "clients" | "principal" | "params">,
  b: VoiceAgentBody,
): Promise<AgentConfigurationValue | undefined> {
  if (b.untypedConfiguration === undefined) return undefined;
  const { voiceAgent } = await ctx.clients.agents.getVoiceAgent({
    spaceId: spaceOf(ctx.principal),
    voiceAgentId: ctx.params.agent_id,
  });
  const type = voiceAgent ? typeNames[voiceAgent.agentType] : undefined;
  if (!type) return undefined;
  const result = validateConfiguration(type, b.untypedConfiguration, ["body", "agent_configuration"]);
  if (result.ok) return result.value;
  const { detail } = s.validationErrorBody(result.issues);
  throw new HttpError(
    422,
    detail[0]?.msg ?? "Validation failed",
    detail as ConstructorParameters<typeof HttpError>[2],
  );
}

export async function deleteVoiceAgent(ctx: PathCtx): Promise<RouteResult> {
  await ctx.clients.agents.deleteVoiceAgent({
    spaceId: spaceOf(ctx.principal),
    voiceAgentId: ctx.params.agent_id,
  });
  return { data: null };
}
