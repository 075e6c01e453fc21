import {
  type AgentConfiguration,
  type Context,
  type Embed,
  EmbedOrientation,
  type LlmConfiguration,
  type ManagedAgentConfiguration,
  type Secret,
  SecretType,
  type VoiceAgent,
} from "@avatar/contracts/agents";
import { AgentType, type DynamicVariables, type VoiceSettings } from "@avatar/contracts/common";
import { streamSettings } from "@avatar/media/video-settings";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { isoTime } from "./time.js";

/** Public shapes of contexts, voice agents, secrets, LLM configurations and embeds. */

const optional = (value: string | undefined): string | null => (value === undefined ? null : value);

/** List items leave out `required_dynamic_variables`; the detail view (and every write) has it. */
export function presentContext(c: Context, detail: boolean) {
  return {
    id: c.id,
    name: c.name,
    prompt: c.prompt,
    opening_text: c.openingText,
    links: c.links.map((l) => ({ url: l.url, faq: l.faq })),
    is_public: c.isPublic,
    ...(detail ? { required_dynamic_variables: c.requiredDynamicVariables } : {}),
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

export const agentTypeName: Record<AgentType, string | null> = {
  [AgentType.UNSPECIFIED]: null,
  [AgentType.MANAGED_AGENT]: "managed_agent",
  [AgentType.VENDOR_A_AGENT]: "vendorA_agent",
  [AgentType.VENDOR_D_AGENT]: "vendorD_agent",
  [AgentType.VENDOR_B_AGENT]: "vendorB_agent",
};

/** List items leave out `agent_configuration`; GET of one agent (and every write) has it. */
export function presentVoiceAgent(a: VoiceAgent, detail: boolean) {
  return {
    id: a.id,
    name: a.name,
    agent_type: agentTypeName[a.agentType],
    is_public: a.isPublic,
    ...(detail ? { agent_configuration: presentConfiguration(a.agentConfiguration) } : {}),
    created_at: isoTime(a.createdAt),
    updated_at: isoTime(a.updatedAt),
  };
}

function presentConfiguration(config: AgentConfiguration | undefined) {
  const c = config?.configuration;
  switch (c?.case) {
    case "managed":
      return presentManaged(c.value);
    case "vendorA":
      return { secret_id: c.value.secretId, agent_id: c.value.agentId, voice_id: optional(c.value.voiceId) };
    case "vendorD":
      return { secret_id: c.value.secretId, agent_id: c.value.agentId };
    case "vendorB":
      return {
        model: c.value.model,
        voice: c.value.voice,
        // Stored as 0 for the full-duplex family, which takes no temperature.
        temperature: c.value.temperature === 0 ? null : c.value.temperature,
        secret_id: c.value.secretId,
        context_id: optional(c.value.contextId),
      };
    default:
      return null;
  }
}

function presentManaged(m: ManagedAgentConfiguration) {
  return {
    voice_id: optional(m.voiceId),
    context_id: optional(m.contextId),
    language: optional(m.language),
    voice_settings: m.voiceSettings ? presentVoiceSettings(m.voiceSettings) : null,
    stt_config: m.sttConfig ? { provider: m.sttConfig.provider } : null,
    llm_settings: m.llmSettings ? { provider: m.llmSettings.provider, model: m.llmSettings.model } : null,
    llm_configuration_id: optional(m.llmConfigurationId),
    dynamic_variables: m.dynamicVariables ? presentDynamicVariables(m.dynamicVariables) : null,
  };
}

function presentVoiceSettings(v: VoiceSettings) {
  const p = v.provider;
  switch (p.case) {
    case "vendorA":
      return {
        provider: "vendorA",
        speed: p.value.speed,
        stability: p.value.stability,
        similarity_boost: p.value.similarityBoost,
        style: p.value.style,
        use_speaker_boost: p.value.useSpeakerBoost,
        model: p.value.model,
        apply_language_text_normalization: p.value.applyLanguageTextNormalization,
      };
    case "vendorE":
      return {
        provider: "vendorE",
        speed: p.value.speed,
        model: p.value.model,
        latency_mode: p.value.latencyMode,
      };
    case "vendorD":
      return { provider: "vendorD", speed: p.value.speed, model: p.value.model };
    default:
      return null;
  }
}

function presentDynamicVariables(d: DynamicVariables) {
  return Object.fromEntries(Object.entries(d.values).map(([k, v]) => [k, toJson(ValueSchema, v)]));
}

export const secretTypeName: Record<SecretType, string | null> = {
  [SecretType.UNSPECIFIED]: null,
  [SecretType.VENDORA_API_KEY]: "VENDORA_API_KEY",
  [SecretType.VENDORB_API_KEY]: "VENDORB_API_KEY",
  [SecretType.VENDORC_API_KEY]: "VENDORC_API_KEY",
  [SecretType.VENDORD_API_KEY]: "VENDORD_API_KEY",
  [SecretType.VENDORE_API_KEY]: "VENDORE_API_KEY",
};

/** A secret's record; its value is not part of any response. */
export function presentSecret(s: Secret) {
  return {
    id: s.id,
    secret_name: s.secretName,
    secret_type: secretTypeName[s.secretType],
    allowed_hosts: s.allowedHosts,
    created_at: isoTime(s.createdAt),
  };
}

export function presentLlmConfiguration(c: LlmConfiguration) {
  return {
    id: c.id,
    display_name: c.displayName,
    model_name: c.modelName,
    secret_id: c.secretId,
    base_url: c.baseUrl,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

const escapeAttribute = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** The embed's page is `<base URL>/embed/<id>`; `script` is an iframe snippet that shows it. */
export function presentEmbed(e: Embed, baseUrl: string) {
  const vertical = e.orientation === EmbedOrientation.VERTICAL;
  const url = `${baseUrl.replace(/\/+$/, "")}/embed/${e.id}`;
  const ratio = vertical ? "9 / 16" : "16 / 9";
  const script =
    `<iframe src="${escapeAttribute(url)}" title="Avatar" allow="microphone; camera; autoplay; fullscreen" ` +
    `style="border: 0; width: 100%; aspect-ratio: ${ratio};"></iframe>`;
  const video = streamSettings(e.videoSettings);
  return {
    embed_id: e.id,
    url,
    script,
    orientation: vertical ? "vertical" : "horizontal",
    video_settings: { quality: video.quality, encoding: video.codec },
    max_concurrent_sessions: e.maxConcurrentSessions,
    max_sessions_per_hour: e.maxSessionsPerHour,
    allowed_origins: e.allowedOrigins,
    is_disabled: e.isDisabled,
  };
}
