import type { VoiceSettings, VoiceSettingsSchema } from "@avatar/contracts/common";
import type { MessageInitShape } from "@bufbuild/protobuf";

/** The voice engines in the order a default is chosen from those a voice supports. */
export const ENGINES = ["vendorA", "vendorE", "vendorD"] as const;
export type Engine = (typeof ENGINES)[number];

/** The provider (wire name) of a voice-settings message, or undefined when none is set. */
export function settingsEngine(settings: VoiceSettings | undefined): Engine | undefined {
  switch (settings?.provider.case) {
    case "vendorA":
      return "vendorA";
    case "vendorE":
      return "vendorE";
    case "vendorD":
      return "vendorD";
    default:
      return undefined;
  }
}

/** Each variant with the defaults of interface.md. */
export function defaultVoiceSettings(engine: Engine): MessageInitShape<typeof VoiceSettingsSchema> {
  switch (engine) {
    case "vendorA":
      return {
        provider: {
          case: "vendorA",
          value: {
            speed: 1,
            stability: 0.75,
            similarityBoost: 0.75,
            style: 0,
            useSpeakerBoost: true,
            model: "vendorA_flash_v2_5",
            applyLanguageTextNormalization: false,
          },
        },
      };
    case "vendorE":
      return {
        provider: { case: "vendorE", value: { speed: 1, model: "s2.1-pro", latencyMode: "balanced" } },
      };
    case "vendorD":
      return { provider: { case: "vendorD", value: { speed: 1, model: "sonic-3.6" } } };
  }
}

/** The managed default model (interface.md, LLM settings object). */
export const DEFAULT_LLM_SETTINGS = { provider: "vendorB", model: "gpt-5.4-nano" } as const;
export const DEFAULT_LANGUAGE = "en";
