import type { Avatar } from "@avatar/contracts/catalog";
import {
  InteractivityType,
  type SessionConfigSchema,
  SessionMode,
  type SessionRequest,
  SessionSource,
  VideoEncoding,
  VideoOrientation,
  VideoQuality,
} from "@avatar/contracts/common";
import { asVariables, type Variables, variablesProto } from "./dynamic-variables.js";
import { givenId } from "./lookup.js";
import type { PlainInit } from "./proto-init.js";
import { resolveAgent } from "./resolve-agent.js";
import { resolveContext } from "./resolve-context.js";
import {
  type ConversationDeps,
  type ConversationInput,
  resolveConversation,
} from "./resolve-conversation.js";
import { checkLiteConfigs } from "./resolve-lite.js";
import { DEFAULT_LANGUAGE } from "./voice-settings.js";

export type SessionConfigInit = PlainInit<typeof SessionConfigSchema>;

/** What every session has, whatever runs it. */
function basics(request: SessionRequest, avatar: Avatar): SessionConfigInit {
  return {
    avatarId: avatar.id,
    isSandbox: request.isSandbox,
    videoSettings: {
      quality: request.videoSettings?.quality || VideoQuality.HIGH,
      encoding: request.videoSettings?.encoding || VideoEncoding.H264,
      orientation: request.videoSettings?.orientation || VideoOrientation.HORIZONTAL,
    },
    interactivityType: request.interactivityType || InteractivityType.CONVERSATIONAL,
    source: SessionSource.API,
  };
}

function personaInput(request: SessionRequest): ConversationInput {
  const p = request.avatarPersona;
  return {
    voiceId: givenId(p?.voiceId),
    contextId: givenId(p?.contextId),
    language: p?.language || DEFAULT_LANGUAGE,
    voiceSettings: p?.voiceSettings?.provider.case ? p.voiceSettings : undefined,
    sttConfig: p?.sttConfig?.provider ? p.sttConfig : undefined,
    llmSettings: p?.llmSettings,
    llmConfigurationId: givenId(request.llmConfigurationId),
    vars: asVariables(request.dynamicVariables),
    fields: {
      voiceId: "avatar_persona.voice_id",
      contextId: "avatar_persona.context_id",
      language: "avatar_persona.language",
      voiceProvider: "avatar_persona.voice_settings.provider",
      textNormalization: "avatar_persona.voice_settings.apply_language_text_normalization",
      llmConfigurationId: "llm_configuration_id",
    },
  };
}

async function liteContext(
  deps: ConversationDeps,
  spaceId: string,
  context: { contextId: string; field: string } | undefined,
  vars: Variables,
): Promise<SessionConfigInit> {
  if (!context) return {};
  const resolved = await resolveContext(deps.agents, spaceId, context.contextId, context.field, vars);
  return { ...resolved, dynamicVariables: variablesProto(vars) };
}

/**
 * The session's configuration from the request: a LITE body as sent (secrets and context checked), a
 * voice agent as its type runs it, or the FULL pipeline from the avatar persona (or the defaults).
 */
export async function resolveSessionConfig(
  deps: ConversationDeps,
  spaceId: string,
  avatar: Avatar,
  request: SessionRequest,
): Promise<SessionConfigInit> {
  const base = basics(request, avatar);

  if (request.mode === SessionMode.LITE) {
    const context = await checkLiteConfigs(deps.agents, spaceId, request.lite);
    base.mode = SessionMode.LITE;
    base.lite = request.lite;
    return context ? Object.assign(base, await liteContext(deps, spaceId, context, {})) : base;
  }

  if (request.voiceAgent) {
    const plan = await resolveAgent(deps.agents, spaceId, request, request.voiceAgent);
    const agent = { voiceAgentId: plan.agent.id, agentType: plan.agent.agentType };
    if (plan.kind === "full") {
      return {
        ...base,
        ...agent,
        mode: SessionMode.FULL,
        ...(await resolveConversation(deps, spaceId, avatar, plan.input)),
      };
    }
    const context = plan.contextId ? { contextId: plan.contextId, field: "voice_agent.id" } : undefined;
    return {
      ...base,
      ...agent,
      mode: SessionMode.LITE,
      lite: plan.lite,
      ...(await liteContext(deps, spaceId, context, asVariables(request.dynamicVariables))),
    };
  }

  return {
    ...base,
    mode: SessionMode.FULL,
    ...(await resolveConversation(deps, spaceId, avatar, personaInput(request))),
  };
}
