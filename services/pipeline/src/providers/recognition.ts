import {
  type SpeechRecognizer,
  SttVendor1Recognizer,
  SttVendor2Recognizer,
  SttVendor3Recognizer,
  VendorARecognizer,
} from "@avatar/providers";
import { type Access, accessTo, type Choice } from "./choice.js";
import { redactRecognizer } from "./redact.js";

/** The public stt_config.provider names, in the order automatic selection tries them. */
export const STT_PROVIDERS = ["sttvendor1", "sttvendor2", "sttvendor3", "vendorA"] as const;
export type SttProvider = (typeof STT_PROVIDERS)[number];

const ENDPOINTS = {
  sttvendor1: "STTVENDOR1",
  sttvendor2: "STTVENDOR2",
  sttvendor3: "STTVENDOR3",
  vendorA: "VENDORA",
} as const;

/**
 * Speech recognition: the session's stt_config.provider when this service can reach it, else the first
 * provider it can (automatic selection). None runs locally: sandbox sessions, and services without any
 * recognition endpoint, get null (the session then warns once and goes on without transcription).
 */
export async function chooseRecognizer(choice: Choice): Promise<SpeechRecognizer | null> {
  if (choice.config.isSandbox) {
    choice.log.info("speech recognition: none (sandbox sessions have no local recognizer)");
    return null;
  }
  const asked = choice.config.sttConfig?.provider as SttProvider | "" | undefined;
  const order =
    asked && STT_PROVIDERS.includes(asked)
      ? [asked, ...STT_PROVIDERS.filter((p) => p !== asked)]
      : STT_PROVIDERS;
  for (const provider of order) {
    if (provider === "vendorA" && !choice.settings.vendorASttModel) continue;
    const access = await accessTo(choice, ENDPOINTS[provider]);
    if (!access) continue;
    if (asked && provider !== asked) {
      choice.warn(
        "speech_recognition_substituted",
        `${asked} speech recognition is not configured on this service; ${provider} transcribes instead`,
      );
    }
    choice.secrets.add(access.key.value);
    choice.log.info("speech recognition chosen", { provider, key: access.key.source });
    return redactRecognizer(build(choice, provider, access), choice.secrets);
  }
  choice.log.info("speech recognition: none configured");
  return null;
}

function build(choice: Choice, provider: SttProvider, access: Access): SpeechRecognizer {
  const common = {
    baseUrl: access.endpoint.url,
    apiKey: access.key.value,
    connectTimeoutMs: choice.settings.connectTimeoutMs,
  };
  switch (provider) {
    case "sttvendor1":
      return new SttVendor1Recognizer(common);
    case "sttvendor2":
      return new SttVendor2Recognizer(common);
    case "sttvendor3":
      return new SttVendor3Recognizer(common);
    case "vendorA":
      return new VendorARecognizer({ ...common, modelId: choice.settings.vendorASttModel ?? "" });
  }
}
