import { ProviderError, type SpeechSynthesizer, type SynthesisRequest } from "../types.js";
import { splitSentences } from "./sentences.js";
import { booleanSetting, numberSetting, primaryLanguage, stringSetting } from "./settings.js";
import {
  DEFAULT_VENDOR_A_MODEL,
  isVendorAModel,
  VENDOR_A_MODEL_TRAITS,
  type VendorAModel,
  vendorAWireModel,
} from "./vendor-a-models.js";
import { kindFromText, malformed } from "./ws-errors.js";
import { decodeBase64, type FrameResult, socketUrl, streamPcm } from "./ws-stream.js";

/**
 * vendorA's "text-to-speech stream-input" WebSocket:
 *   {baseUrl}/v1/text-to-speech/{voice_id}/stream-input?model_id=..&output_format=pcm_24000
 * The key goes in the `xi-api-key` upgrade header. The client sends {text: " ", voice_settings} to
 * open, the text in sentence chunks (each ending with a space, try_trigger_generation; the last also
 * flush), then {text: ""} to end. The server answers {audio: base64 | null, isFinal, normalizedAlignment}
 * frames and closes; errors arrive as {message, error, code} followed by a close (1008 for bad keys,
 * quota and limits).
 */

export interface VendorASynthesizerOptions {
  baseUrl: string;
  apiKey: string;
  /** Real wire model ids per public model name (default: the public name itself). */
  modelIds?: Partial<Record<VendorAModel, string>>;
  connectTimeoutMs?: number;
  /** Give up on a provider silent this long mid-stream (default 15 s). */
  idleTimeoutMs?: number;
}

const PROVIDER = "vendorA";

export class VendorASynthesizer implements SpeechSynthesizer {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorASynthesizerOptions) {}

  async *synthesize(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    const chunks = splitSentences(request.text);
    if (chunks.length === 0) return;
    const model = stringSetting(request.settings, "model", DEFAULT_VENDOR_A_MODEL);
    if (!isVendorAModel(model)) throw new ProviderError(PROVIDER, `unknown model ${model}`, "bad_request");

    const url = socketUrl(
      this.options.baseUrl,
      `/v1/text-to-speech/${encodeURIComponent(request.voiceId)}/stream-input`,
      {
        model_id: vendorAWireModel(model, this.options.modelIds),
        output_format: "pcm_24000",
        ...languageQuery(model, request),
      },
    );
    const messages = [
      { text: " ", voice_settings: vendorAVoiceSettings(model, request.settings) },
      ...chunks.map((chunk, i) =>
        i === chunks.length - 1
          ? { text: `${chunk} `, try_trigger_generation: true, flush: true }
          : { text: `${chunk} `, try_trigger_generation: true },
      ),
      { text: "" },
    ];
    yield* streamPcm(
      {
        provider: PROVIDER,
        url,
        headers: { "xi-api-key": this.options.apiKey },
        signal,
        connectTimeoutMs: this.options.connectTimeoutMs,
        idleTimeoutMs: this.options.idleTimeoutMs,
      },
      {
        start: (send) => {
          for (const message of messages) send(JSON.stringify(message));
        },
        onFrame: readFrame,
      },
    );
  }
}

/** The models of the v3 family honour only stability; the others take the full set. */
export function vendorAVoiceSettings(
  model: VendorAModel,
  settings: Record<string, unknown>,
): Record<string, number | boolean> {
  const stability = numberSetting(settings, "stability", 0.75);
  if (VENDOR_A_MODEL_TRAITS[model].stabilityOnly) return { stability };
  return {
    stability,
    similarity_boost: numberSetting(settings, "similarity_boost", 0.75),
    style: numberSetting(settings, "style", 0),
    use_speaker_boost: booleanSetting(settings, "use_speaker_boost", true),
    speed: numberSetting(settings, "speed", 1),
  };
}

/** language_code where the model takes it; Japanese text normalization only for ja (it adds latency). */
function languageQuery(model: VendorAModel, request: SynthesisRequest): Record<string, string> {
  const language = primaryLanguage(request.language);
  const query: Record<string, string> = {};
  if (language && VENDOR_A_MODEL_TRAITS[model].languageCode) query.language_code = language;
  if (language === "ja" && booleanSetting(request.settings, "apply_language_text_normalization", false)) {
    query.language_code = "ja";
    query.apply_language_text_normalization = "true";
  }
  return query;
}

function readFrame(data: Buffer, isBinary: boolean): FrameResult | undefined {
  if (isBinary) throw malformed(PROVIDER, "binary frame on a JSON stream");
  let message: unknown;
  try {
    message = JSON.parse(data.toString("utf8"));
  } catch (err) {
    throw malformed(PROVIDER, "not JSON", err);
  }
  if (typeof message !== "object" || message === null || Array.isArray(message))
    throw malformed(PROVIDER, "not an object");
  const frame = message as Record<string, unknown>;
  if (typeof frame.error === "string" || (typeof frame.message === "string" && frame.audio === undefined)) {
    const text = [frame.error, frame.message].filter((part) => typeof part === "string").join(": ");
    throw new ProviderError(PROVIDER, text, kindFromText(text));
  }
  let audio: Uint8Array | undefined;
  if (typeof frame.audio === "string" && frame.audio.length > 0) {
    audio = decodeBase64(frame.audio);
    if (!audio) throw malformed(PROVIDER, "audio is not base64");
  } else if (frame.audio !== undefined && frame.audio !== null && frame.audio !== "") {
    throw malformed(PROVIDER, "audio is not a string");
  }
  return { audio, done: frame.isFinal === true };
}
