import { randomUUID } from "node:crypto";
import { kindForStatus } from "../http-errors.js";
import {
  ProviderError,
  SESSION_SAMPLE_RATE,
  type SpeechSynthesizer,
  type SynthesisRequest,
} from "../types.js";
import { splitSentences } from "./sentences.js";
import { numberSetting, primaryLanguage, stringSetting } from "./settings.js";
import { kindFromText, malformed } from "./ws-errors.js";
import { decodeBase64, type FrameResult, socketUrl, streamPcm } from "./ws-stream.js";

/**
 * vendorD's TTS WebSocket: {baseUrl}/tts/websocket?api_key=..&<version parameter>=..
 * Each generation request carries the whole configuration (model_id, voice {mode: "id", id},
 * output_format raw pcm_s16le at 24 kHz, language, context_id); the text goes in sentence-sized
 * continuations (`continue: true`), the last with `continue: false`. The server answers
 * {type: "chunk", data: base64, context_id}, {type: "done"} and {type: "error", status_code, error_code,
 * title, message}; timestamps and flush acknowledgements are ignored.
 *
 * Speed: the sonic-3 family takes generation_config.speed (0.6..1.5); the older models take the
 * experimental voice control (-1..1 around normal speed).
 */

export interface VendorDSynthesizerOptions {
  baseUrl: string;
  apiKey: string;
  /** API version sent with every connection. */
  apiVersion?: string;
  /** Name of the version query parameter (the vendor's own name for it is configured by the operator). */
  versionParam?: string;
  connectTimeoutMs?: number;
  /** Give up on a provider silent this long mid-stream (default 15 s). */
  idleTimeoutMs?: number;
}

export const VENDOR_D_MODELS = ["sonic-3.6", "sonic-3.5", "sonic-3", "sonic-2", "sonic-turbo"] as const;
const DEFAULT_MODEL = "sonic-3.6";
const DEFAULT_API_VERSION = "2026-03-01";
const DEFAULT_VERSION_PARAM = "vendorD_version";
const PROVIDER = "vendorD";

export class VendorDSynthesizer implements SpeechSynthesizer {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorDSynthesizerOptions) {}

  async *synthesize(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    const chunks = splitSentences(request.text);
    if (chunks.length === 0) return;
    const model = stringSetting(request.settings, "model", DEFAULT_MODEL);
    if (!(VENDOR_D_MODELS as readonly string[]).includes(model)) {
      throw new ProviderError(PROVIDER, `unknown model ${model}`, "bad_request");
    }
    const contextId = randomUUID();
    const base = generationBase(model, request, contextId);
    const messages = chunks.map((chunk, i) => {
      const last = i === chunks.length - 1;
      return { ...base, transcript: last ? chunk : `${chunk} `, continue: !last };
    });
    const url = socketUrl(this.options.baseUrl, "/tts/websocket", {
      api_key: this.options.apiKey,
      [this.options.versionParam ?? DEFAULT_VERSION_PARAM]: this.options.apiVersion ?? DEFAULT_API_VERSION,
    });
    yield* streamPcm(
      {
        provider: PROVIDER,
        url,
        signal,
        connectTimeoutMs: this.options.connectTimeoutMs,
        idleTimeoutMs: this.options.idleTimeoutMs,
      },
      {
        start: (send) => {
          for (const message of messages) send(JSON.stringify(message));
        },
        onFrame: (data, isBinary) => readFrame(data, isBinary, contextId),
      },
    );
  }
}

function generationBase(
  model: string,
  request: SynthesisRequest,
  contextId: string,
): Record<string, unknown> {
  const speed = numberSetting(request.settings, "speed", 1);
  const voice: Record<string, unknown> = { mode: "id", id: request.voiceId };
  const message: Record<string, unknown> = {
    model_id: model,
    voice,
    output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: SESSION_SAMPLE_RATE },
    context_id: contextId,
    language: primaryLanguage(request.language),
  };
  if (model.startsWith("sonic-3")) {
    message.generation_config = { speed };
  } else if (speed !== 1) {
    // 0.6..1.5 onto the older models' -1..1 scale (0 = normal).
    voice.__experimental_controls = { speed: Math.max(-1, Math.min(1, Math.round((speed - 1) * 200) / 100)) };
  }
  return message;
}

function readFrame(data: Buffer, isBinary: boolean, contextId: string): FrameResult | undefined {
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
  if (typeof frame.type !== "string") throw malformed(PROVIDER, "no type");
  // Errors without a context concern the whole connection, which is this synthesis's alone.
  if (frame.type === "error" && (frame.context_id === undefined || frame.context_id === contextId))
    throw errorFrom(frame);
  if (frame.context_id !== undefined && frame.context_id !== contextId) return undefined;
  if (frame.type === "chunk") {
    if (typeof frame.data !== "string") throw malformed(PROVIDER, "chunk without data");
    const audio = decodeBase64(frame.data);
    if (!audio) throw malformed(PROVIDER, "chunk data is not base64");
    return { audio, done: frame.done === true };
  }
  return { done: frame.type === "done" || frame.done === true };
}

function errorFrom(frame: Record<string, unknown>): ProviderError {
  const text = [frame.error_code, frame.title, frame.message, frame.error]
    .filter((p) => typeof p === "string")
    .join(": ");
  const status = typeof frame.status_code === "number" ? frame.status_code : undefined;
  const kind =
    status === 429 ? "rate_limited" : kindFromText(text, status ? kindForStatus(status) : "unavailable");
  return new ProviderError(PROVIDER, text || "error frame", kind);
}
