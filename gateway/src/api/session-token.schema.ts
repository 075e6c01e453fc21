/**
 * The two body shapes of POST /v1/sessions/token (interface.md, "POST /v1/sessions/token"), FULL and
 * LITE, and the choice between them. Every range, enum and default of the interface lives here; the
 * rules that need stored resources (ids, agent types, limits) are the tokens service's.
 */
import * as s from "../schema/index.js";
import type { Loc, ParseResult } from "../schema/issues.js";
import type { JsonSchema, JsonSchemaContext } from "../schema/json-schema.js";
import { isPlainObject } from "../schema/object.js";
import { type Mode, Schema } from "../schema/schema.js";

// ---- Shared by both shapes ----

export const VIDEO_QUALITIES = ["very_high", "high", "medium", "low"] as const;
export const VIDEO_ENCODINGS = ["VP8", "H264"] as const;

export const VideoSettings = s.object("VideoSettings", {
  quality: s.enumOf(VIDEO_QUALITIES, { name: "VideoQuality" }).default("high"),
  encoding: s
    .enumOf(VIDEO_ENCODINGS, { name: "VideoEncoding" })
    .default("H264")
    .describe("VP8 is deprecated; H264 is the default."),
});

/** The public mode names; CUSTOM is the earlier name of LITE. */
export const MODES = ["FULL", "LITE", "CUSTOM"] as const;

/** Integer seconds; the space's tier limit is checked by the tokens service. */
const maxSessionDuration = s.int({ ge: 1 }).describe("Seconds; at most the limit of the space's tier.");

const common = {
  mode: s.literal(...MODES).optional(),
  avatar_id: s.uuid(),
  is_sandbox: s.boolean().default(false),
  video_settings: VideoSettings.nullable().optional(),
  max_session_duration: maxSessionDuration.optional(),
};

/** string, integer, number or boolean values (voice agent overrides, vendorA agent variables). */
const scalar = s.union([s.string(), s.int(), s.number(), s.boolean()]);

// ---- FULL ----

export const VENDOR_A_MODELS = [
  "vendorA_flash_v2_5",
  "vendorA_multilingual_v2",
  "vendorA_v3",
  "vendorA_v3_conversational",
  "vendorA_v4_turbo",
] as const;
export const VENDOR_E_MODELS = ["s1", "s2", "s2-pro", "s2.1-pro"] as const;
export const VENDOR_E_LATENCY_MODES = ["normal", "balanced", "low"] as const;
export const VENDOR_D_MODELS = ["sonic-3.6", "sonic-3.5", "sonic-3", "sonic-2", "sonic-turbo"] as const;
export const STT_PROVIDERS = ["sttvendor1", "sttvendor2", "sttvendor3", "vendorA"] as const;
export const LLM_MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-5-nano", "gpt-5.4-nano"] as const;
export const INTERACTIVITY_TYPES = ["CONVERSATIONAL", "PUSH_TO_TALK"] as const;

export const VendorAVoiceSettings = s.object("VendorAVoiceSettings", {
  provider: s.literal("vendorA").default("vendorA"),
  speed: s.number({ ge: 0.8, le: 1.2 }).default(1),
  stability: s.number({ ge: 0, le: 1 }).default(0.75),
  similarity_boost: s.number({ ge: 0, le: 1 }).default(0.75),
  style: s.number({ ge: 0, le: 1 }).default(0),
  use_speaker_boost: s.boolean().default(true),
  model: s.enumOf(VENDOR_A_MODELS, { name: "VendorAModel" }).default("vendorA_flash_v2_5"),
  apply_language_text_normalization: s
    .boolean()
    .default(false)
    .describe("Only valid when the session language is ja; adds latency."),
});

export const VendorEVoiceSettings = s.object("VendorEVoiceSettings", {
  provider: s.literal("vendorE").default("vendorE"),
  speed: s.number({ ge: 0.8, le: 1.2 }).default(1),
  model: s.enumOf(VENDOR_E_MODELS, { name: "VendorEModel" }).default("s2.1-pro"),
  latency_mode: s.enumOf(VENDOR_E_LATENCY_MODES, { name: "VendorELatencyMode" }).default("balanced"),
});

export const VendorDVoiceSettings = s.object("VendorDVoiceSettings", {
  provider: s.literal("vendorD").default("vendorD"),
  speed: s.number({ ge: 0.6, le: 1.5 }).default(1),
  model: s.enumOf(VENDOR_D_MODELS, { name: "VendorDModel" }).default("sonic-3.6"),
});

export const VoiceSettings = s.discriminatedUnion("provider", {
  vendorA: VendorAVoiceSettings,
  vendorE: VendorEVoiceSettings,
  vendorD: VendorDVoiceSettings,
});

export const SttConfig = s.object("SttConfig", {
  provider: s.enumOf(STT_PROVIDERS, { name: "SttProvider" }),
});

export const LlmSettings = s.object("LlmSettings", {
  provider: s.literal("vendorB").default("vendorB"),
  model: s.enumOf(LLM_MODELS, { name: "LlmModel" }).default("gpt-5.4-nano"),
});

export const AvatarPersona = s.object(
  "AvatarPersona",
  {
    voice_id: s.uuid().optional().describe("When absent, the avatar's default voice is used."),
    context_id: s.uuid().optional(),
    language: s.string().default("en"),
    voice_settings: VoiceSettings.nullable().optional(),
    stt_config: SttConfig.nullable().optional(),
    llm_settings: LlmSettings.nullable().optional(),
  },
  { description: "Deprecated: use voice_agent." },
);

export const VoiceAgentRef = s.object("VoiceAgentRef", {
  id: s.uuid(),
  language: s.string().optional(),
  dynamic_variables: s.record(scalar).optional(),
});

export const MemoryRef = s.object("MemoryRef", {
  prev_session_id: s.uuid().optional(),
  session_memory_id: s.uuid().optional(),
});

export const DYNAMIC_VARIABLES_MAX_ENTRIES = 50;
export const DYNAMIC_VARIABLE_KEY_MAX = 64;
export const DYNAMIC_VARIABLE_VALUE_MAX = 1000;

export const FullTokenRequest = s.object("FullSessionTokenRequest", {
  ...common,
  avatar_persona: AvatarPersona.nullable().optional(),
  voice_agent: VoiceAgentRef.nullable().optional(),
  interactivity_type: s.enumOf(INTERACTIVITY_TYPES, { name: "InteractivityType" }).default("CONVERSATIONAL"),
  llm_configuration_id: s.uuid().optional(),
  dynamic_variables: s
    .record(s.string({ maxLength: DYNAMIC_VARIABLE_VALUE_MAX }), {
      maxEntries: DYNAMIC_VARIABLES_MAX_ENTRIES,
      keyMaxLength: DYNAMIC_VARIABLE_KEY_MAX,
    })
    .optional(),
  memory: MemoryRef.nullable().optional(),
});

// ---- LITE ----

export const VENDOR_B_REALTIME_MODELS = [
  "gpt-realtime",
  "gpt-realtime-mini",
  "gpt-realtime-2.1",
  "gpt-realtime-2.1-mini",
  "gpt-live-1",
] as const;
/** The model that runs the full-duplex family; every other model runs the realtime family. */
export const FULL_DUPLEX_MODEL = "gpt-live-1";
export const REALTIME_VOICES = [
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "fable",
  "onyx",
  "nova",
  "shimmer",
  "sage",
  "verse",
  "marin",
  "cedar",
] as const;
export const FULL_DUPLEX_VOICES = ["aster", "beacon", "cinder", "marin", "stone", "vesper"] as const;
const VENDOR_B_VOICES = [...new Set<string>([...REALTIME_VOICES, ...FULL_DUPLEX_VOICES])];

export const VENDOR_C_VOICES = [
  "Achernar",
  "Achird",
  "Algenib",
  "Algieba",
  "Alnilam",
  "Aoede",
  "Autonoe",
  "Callirrhoe",
  "Charon",
  "Despina",
  "Enceladus",
  "Erinome",
  "Fenrir",
  "Gacrux",
  "Iapetus",
  "Kore",
  "Laomedeia",
  "Leda",
  "Orus",
  "Pulcherrima",
  "Puck",
  "Rasalgethi",
  "Sadachbia",
  "Sadaltager",
  "Schedar",
  "Sulafat",
  "Umbriel",
  "Vindemiatrix",
  "Zephyr",
  "Zubenelgenubi",
] as const;
export const VENDOR_C_MODELS = [
  "vendorC-2.5-flash-native-audio-preview-12-2025",
  "vendorC-3.1-flash-live-preview",
] as const;

/** The caller's own transportA room: the worker joins it with the token, so each part must be usable. */
export const TransportAConfig = s.object("TransportAConfig", {
  transportA_url: s
    .url({ schemes: ["ws", "wss", "http", "https"], maxLength: 2083 })
    .describe("The caller's transportA server (ws, wss, http or https)."),
  transportA_room: s.string({ minLength: 1 }),
  transportA_client_token: s
    .string({ minLength: 1 })
    .describe("A token that lets the avatar join the room and publish its camera and microphone."),
});

/** Accepted in shape, then refused with 400: this deployment has no transportB (contract section 7). */
export const TransportBConfig = s.object("TransportBConfig", {
  transportB_app_id: s.string(),
  transportB_token: s.string(),
  transportB_channel: s.string(),
  transportB_uid: s.string(),
});

export const VendorAAgentConfig = s.object("VendorAAgentConfig", {
  secret_id: s.uuid().describe("A stored secret of type VENDORA_API_KEY."),
  agent_id: s.string(),
  voice_id: s.string().optional().describe("Overrides the agent's default voice for this session."),
  dynamic_variables: s.record(scalar).optional(),
});

export const VendorDAgentConfig = s.object("VendorDAgentConfig", {
  secret_id: s.uuid().describe("A stored secret of type VENDORD_API_KEY."),
  agent_id: s.string(),
});

export const isFullDuplex = (model: string): boolean => model === FULL_DUPLEX_MODEL;

/** The voice is checked against the model's family, and temperature applies to the realtime family only. */
export const VendorBRealtimeConfig = s
  .object("VendorBRealtimeConfig", {
    model: s.enumOf(VENDOR_B_REALTIME_MODELS, { name: "VendorBRealtimeModel" }).default("gpt-realtime"),
    voice: s
      .enumOf(VENDOR_B_VOICES, { name: "VendorBVoice" })
      .optional()
      .describe("Default: alloy for the realtime family, marin for the full-duplex family (gpt-live-1)."),
    temperature: s.number({ ge: 0.6, le: 1.2 }).optional().describe("Realtime family only; default 0.8."),
    secret_id: s.uuid().describe("A stored secret of type VENDORB_API_KEY."),
    context_id: s.uuid().optional(),
  })
  .refine(
    function voiceOfFamily(c) {
      const family: readonly string[] = isFullDuplex(c.model) ? FULL_DUPLEX_VOICES : REALTIME_VOICES;
      return c.voice === undefined || family.includes(c.voice);
    },
    (c) =>
      isFullDuplex(c.model)
        ? `voice '${c.voice}' is not a voice of ${c.model}; its voices are ${FULL_DUPLEX_VOICES.join(", ")}`
        : `voice '${c.voice}' is not a voice of ${c.model}; its voices are ${REALTIME_VOICES.join(", ")}`,
  )
  .refine(
    function temperatureOfFamily(c) {
      return c.temperature === undefined || !isFullDuplex(c.model);
    },
    (c) => `temperature applies to the realtime models only, not to ${c.model}`,
  );

export const VendorCRealtimeConfig = s.object("VendorCRealtimeConfig", {
  secret_id: s.uuid().describe("A stored secret of type VENDORC_API_KEY."),
  context_id: s.uuid().optional(),
  voice: s.enumOf(VENDOR_C_VOICES, { name: "VendorCVoice" }).default("Puck"),
  temperature: s.number({ ge: 0, le: 2 }).default(0.8),
  model: s
    .enumOf(VENDOR_C_MODELS, { name: "VendorCRealtimeModel" })
    .default("vendorC-3.1-flash-live-preview"),
});

/** The objects only a LITE body has; their presence selects LITE when `mode` is absent. */
export const LITE_ONLY_KEYS = [
  "transportA_config",
  "transportB_config",
  "vendorA_agent_config",
  "vendorD_agent_config",
  "vendorB_realtime_config",
  "vendorC_realtime_config",
] as const;

export const LiteTokenRequest = s.object("LiteSessionTokenRequest", {
  ...common,
  transportA_config: TransportAConfig.nullable().optional(),
  transportB_config: TransportBConfig.nullable()
    .optional()
    .describe("Not available in this deployment: a request carrying it is refused with 400."),
  vendorA_agent_config: VendorAAgentConfig.nullable().optional(),
  vendorD_agent_config: VendorDAgentConfig.nullable().optional(),
  vendorB_realtime_config: VendorBRealtimeConfig.nullable().optional(),
  vendorC_realtime_config: VendorCRealtimeConfig.nullable().optional(),
});

export type FullBody = s.Infer<typeof FullTokenRequest>;
export type LiteBody = s.Infer<typeof LiteTokenRequest>;
export type TokenBody = { shape: "FULL"; body: FullBody } | { shape: "LITE"; body: LiteBody };

/**
 * Which shape a body has: `mode` FULL -> FULL, LITE or CUSTOM -> LITE; with `mode` absent (or not one of
 * those, which the chosen shape then reports at ["body","mode"]) a LITE-only object present and not
 * null selects LITE, otherwise FULL.
 */
export function selectShape(input: Record<string, unknown>): "FULL" | "LITE" {
  const mode = input.mode;
  if (mode === "FULL") return "FULL";
  if (mode === "LITE" || mode === "CUSTOM") return "LITE";
  const present = (key: string) =>
    Object.hasOwn(input, key) && input[key] !== null && input[key] !== undefined;
  return LITE_ONLY_KEYS.some(present) ? "LITE" : "FULL";
}

/** The token request body: one of the two shapes, each validated (and reported) as its own model. */
export class TokenRequestSchema extends Schema<TokenBody> {
  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<TokenBody> {
    const shape = isPlainObject(input) ? selectShape(input) : "FULL";
    if (shape === "LITE") {
      const result = LiteTokenRequest.validate(input, loc, mode);
      return result.ok ? { ok: true, value: { shape, body: result.value } } : result;
    }
    const result = FullTokenRequest.validate(input, loc, mode);
    return result.ok ? { ok: true, value: { shape, body: result.value } } : result;
  }

  protected kindLabel(): string {
    return "SessionTokenRequest";
  }

  protected kindJsonSchema(ctx: JsonSchemaContext): JsonSchema {
    return {
      oneOf: [ctx.of(FullTokenRequest), ctx.of(LiteTokenRequest)],
      description:
        "FULL or LITE, chosen by `mode` (CUSTOM is LITE); without `mode`, any LITE-only object selects LITE.",
    };
  }
}

export const tokenRequestBody = new TokenRequestSchema();
