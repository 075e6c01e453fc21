import type { VoiceSettings } from "@avatar/contracts/common";
import {
  ProviderError,
  type SpeechSynthesizer,
  VendorASynthesizer,
  VendorDSynthesizer,
  VendorESynthesizer,
} from "@avatar/providers";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Access, accessTo, type Choice } from "./choice.js";
import { redactSynthesizer } from "./redact.js";

export type Engine = "vendorA" | "vendorE" | "vendorD";

export interface ChosenVoice {
  synthesizer: SpeechSynthesizer;
  voiceId: string;
  settings: Record<string, unknown>;
}

const ENDPOINTS = { vendorA: "VENDORA", vendorE: "VENDORE", vendorD: "VENDORD" } as const;

/**
 * The avatar's voice: the engine of the session's voice settings, voiced with the catalog voice's id for
 * that engine. Sandbox sessions, and engines this service has no endpoint or key for, speak with the
 * local synthesizer (the latter with a warning to the client).
 */
export async function chooseSynthesizer(choice: Choice): Promise<ChosenVoice> {
  const { config } = choice;
  const { engine, settings } = voiceSettings(config.voiceSettings);
  if (config.isSandbox) {
    choice.log.info("speech synthesis: local (sandbox)", { engine });
    return { synthesizer: choice.local(), voiceId: config.voiceId, settings };
  }
  const access = await accessTo(choice, ENDPOINTS[engine]);
  if (!access) {
    choice.warn(
      "speech_synthesis_unavailable",
      `${engine} speech synthesis is not configured on this service; the avatar speaks with the local synthesizer`,
    );
    return { synthesizer: choice.local(), voiceId: config.voiceId, settings };
  }
  const voiceId = await providerVoiceId(choice, engine);
  choice.secrets.add(access.key.value);
  choice.log.info("speech synthesis chosen", { provider: engine, key: access.key.source });
  return { synthesizer: redactSynthesizer(build(choice, engine, access), choice.secrets), voiceId, settings };
}

function build(choice: Choice, engine: Engine, access: Access): SpeechSynthesizer {
  const common = {
    baseUrl: access.endpoint.url,
    apiKey: access.key.value,
    connectTimeoutMs: choice.settings.connectTimeoutMs,
  };
  switch (engine) {
    case "vendorA":
      return new VendorASynthesizer(common);
    case "vendorE":
      return new VendorESynthesizer(common);
    case "vendorD":
      return new VendorDSynthesizer({ ...common, apiVersion: choice.settings.vendorDApiVersion });
  }
}

/** The catalog voice's own id at the engine's provider. */
async function providerVoiceId(choice: Choice, engine: Engine): Promise<string> {
  const { voiceId } = choice.config;
  let voice: Awaited<ReturnType<Choice["clients"]["catalog"]["getVoice"]>>["voice"];
  try {
    voice = (await choice.clients.catalog.getVoice({ spaceId: choice.spaceId, voiceId })).voice;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) {
      throw new ProviderError(engine, `the voice ${voiceId} no longer exists`, "bad_request");
    }
    const message = err instanceof ConnectError ? err.rawMessage : String(err);
    throw new ProviderError(engine, `cannot read the voice ${voiceId}: ${message}`, "unavailable");
  }
  const id = voice?.providerVoiceIds[engine];
  if (!id) throw new ProviderError(engine, `the voice ${voiceId} has no ${engine} voice`, "bad_request");
  return id;
}

/** The engine and the public (wire-named) settings of the session's voice-settings variant. */
export function voiceSettings(voice: VoiceSettings | undefined): {
  engine: Engine;
  settings: Record<string, unknown>;
} {
  const p = voice?.provider;
  switch (p?.case) {
    case "vendorE":
      return {
        engine: "vendorE",
        settings: withoutUnset({
          speed: p.value.speed,
          model: p.value.model,
          latency_mode: p.value.latencyMode,
        }),
      };
    case "vendorD":
      return { engine: "vendorD", settings: withoutUnset({ speed: p.value.speed, model: p.value.model }) };
    case "vendorA":
      return {
        engine: "vendorA",
        settings: withoutUnset({
          speed: p.value.speed,
          stability: p.value.stability,
          similarity_boost: p.value.similarityBoost,
          style: p.value.style,
          use_speaker_boost: p.value.useSpeakerBoost,
          model: p.value.model,
          apply_language_text_normalization: p.value.applyLanguageTextNormalization,
        }),
      };
    default:
      return { engine: "vendorA", settings: {} };
  }
}

/** Proto3 leaves unset fields at zero: an empty model or a zero speed means "the default". */
function withoutUnset(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).filter(([key, value]) => value !== "" && !(key === "speed" && value === 0)),
  );
}
