/**
 * A validated token request body as `avatar.common.v1.SessionRequest`. Defaults are already applied by
 * the schema; absent optional objects stay absent, and a JSON null reads as absent.
 */
import {
  type DynamicVariablesSchema,
  InteractivityType,
  SessionMode,
  type SessionRequest,
  SessionRequestSchema,
  VideoEncoding,
  VideoQuality,
  type VoiceSettingsSchema,
} from "@avatar/contracts/common";
import { create, fromJson, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type * as s from "../schema/index.js";
import {
  type FullBody,
  isFullDuplex,
  type LiteBody,
  type TokenBody,
  type VideoSettings,
  type VoiceSettings,
} from "./session-token.schema.js";

/** The plain-object form of a SessionRequest init (not a built message), so parts can be spread. */
type Init = Exclude<MessageInitShape<typeof SessionRequestSchema>, SessionRequest>;

/** The largest value the int32 proto field carries; anything above is over every tier's limit anyway. */
export const MAX_DURATION_WIRE_LIMIT = 2_147_483_647;

const QUALITIES: Record<string, VideoQuality> = {
  very_high: VideoQuality.VERY_HIGH,
  high: VideoQuality.HIGH,
  medium: VideoQuality.MEDIUM,
  low: VideoQuality.LOW,
};
const ENCODINGS: Record<string, VideoEncoding> = { VP8: VideoEncoding.VP8, H264: VideoEncoding.H264 };
const INTERACTIVITY: Record<string, InteractivityType> = {
  CONVERSATIONAL: InteractivityType.CONVERSATIONAL,
  PUSH_TO_TALK: InteractivityType.PUSH_TO_TALK,
};

/** Realtime-family defaults of vendorB_realtime_config (interface.md, LITE configuration objects). */
const VENDOR_B_DEFAULT_TEMPERATURE = 0.8;

/** The public video_settings object as the contracts' VideoSettings (defaults: high, H264). */
export function videoSettings(v: s.Infer<typeof VideoSettings> | null | undefined) {
  return {
    quality: QUALITIES[v?.quality ?? "high"] ?? VideoQuality.HIGH,
    encoding: ENCODINGS[v?.encoding ?? "H264"] ?? VideoEncoding.H264,
  };
}

function dynamicVariables(
  map: Record<string, string | number | boolean> | undefined,
): MessageInitShape<typeof DynamicVariablesSchema> | undefined {
  if (map === undefined) return undefined;
  const values: Record<string, ReturnType<typeof fromJson<typeof ValueSchema>>> = {};
  for (const [key, value] of Object.entries(map)) {
    Object.defineProperty(values, key, {
      value: fromJson(ValueSchema, value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { values };
}

function voiceSettings(
  v: s.Infer<typeof VoiceSettings> | null | undefined,
): MessageInitShape<typeof VoiceSettingsSchema> | undefined {
  if (!v) return undefined;
  switch (v.provider) {
    case "vendorA":
      return {
        provider: {
          case: "vendorA" as const,
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
        provider: {
          case: "vendorE" as const,
          value: { speed: v.speed, model: v.model, latencyMode: v.latency_mode },
        },
      };
    case "vendorD":
      return { provider: { case: "vendorD" as const, value: { speed: v.speed, model: v.model } } };
  }
}

/** What every request has; the mode's own fields are set on it. */
function common(body: FullBody | LiteBody, mode: SessionMode): Init {
  const init: Init = {
    mode,
    avatarId: body.avatar_id,
    isSandbox: body.is_sandbox,
    videoSettings: videoSettings(body.video_settings),
  };
  if (body.max_session_duration !== undefined) {
    init.maxSessionDuration = Math.min(body.max_session_duration, MAX_DURATION_WIRE_LIMIT);
  }
  return init;
}

function fullRequest(body: FullBody): Init {
  const persona = body.avatar_persona;
  const agent = body.voice_agent;
  const memory = body.memory;
  return Object.assign(common(body, SessionMode.FULL), {
    interactivityType: INTERACTIVITY[body.interactivity_type] ?? InteractivityType.CONVERSATIONAL,
    avatarPersona: persona
      ? {
          voiceId: persona.voice_id,
          contextId: persona.context_id,
          language: persona.language,
          voiceSettings: voiceSettings(persona.voice_settings),
          sttConfig: persona.stt_config ? { provider: persona.stt_config.provider } : undefined,
          llmSettings: persona.llm_settings
            ? { provider: persona.llm_settings.provider, model: persona.llm_settings.model }
            : undefined,
        }
      : undefined,
    voiceAgent: agent
      ? {
          id: agent.id,
          language: agent.language,
          dynamicVariables: dynamicVariables(agent.dynamic_variables),
        }
      : undefined,
    llmConfigurationId: body.llm_configuration_id,
    dynamicVariables: dynamicVariables(body.dynamic_variables),
    memory: memory
      ? { prevSessionId: memory.prev_session_id, sessionMemoryId: memory.session_memory_id }
      : undefined,
  });
}

function liteRequest(body: LiteBody): Init {
  const a = body.transportA_config;
  const b = body.transportB_config;
  const va = body.vendorA_agent_config;
  const vd = body.vendorD_agent_config;
  const vb = body.vendorB_realtime_config;
  const vc = body.vendorC_realtime_config;
  const init = common(body, SessionMode.LITE);
  init.interactivityType = InteractivityType.CONVERSATIONAL;
  // A LITE body usually carries one of these configurations, or none: only those given are set.
  const lite: NonNullable<Init["lite"]> = {};
  init.lite = lite;
  if (a) {
    lite.transportA = {
      transportAUrl: a.transportA_url,
      transportARoom: a.transportA_room,
      transportAClientToken: a.transportA_client_token,
    };
  }
  if (b) {
    lite.transportB = {
      transportBAppId: b.transportB_app_id,
      transportBToken: b.transportB_token,
      transportBChannel: b.transportB_channel,
      transportBUid: b.transportB_uid,
    };
  }
  if (va) {
    lite.vendorAAgent = {
      secretId: va.secret_id,
      agentId: va.agent_id,
      voiceId: va.voice_id,
      dynamicVariables: dynamicVariables(va.dynamic_variables),
    };
  }
  if (vd) lite.vendorDAgent = { secretId: vd.secret_id, agentId: vd.agent_id };
  if (vb) {
    lite.vendorBRealtime = {
      model: vb.model,
      voice: vb.voice ?? (isFullDuplex(vb.model) ? "marin" : "alloy"),
      // The full-duplex family has no temperature; 0 stands for "not applicable".
      temperature: isFullDuplex(vb.model) ? 0 : (vb.temperature ?? VENDOR_B_DEFAULT_TEMPERATURE),
      secretId: vb.secret_id,
      contextId: vb.context_id,
    };
  }
  if (vc) {
    lite.vendorCRealtime = {
      secretId: vc.secret_id,
      contextId: vc.context_id,
      voice: vc.voice,
      temperature: vc.temperature,
      model: vc.model,
    };
  }
  return init;
}

/** The proto request for a parsed body (CUSTOM arrives here as the LITE shape). */
export function toSessionRequest(parsed: TokenBody): SessionRequest {
  return create(
    SessionRequestSchema,
    parsed.shape === "FULL" ? fullRequest(parsed.body) : liteRequest(parsed.body),
  );
}
