import { decodeMsgpack, encodeMsgpack, type MsgpackValue } from "../encoding/msgpack.js";
import {
  ProviderError,
  SESSION_SAMPLE_RATE,
  type SpeechSynthesizer,
  type SynthesisRequest,
} from "../types.js";
import { splitSentences } from "./sentences.js";
import { numberSetting, stringSetting } from "./settings.js";
import { kindFromText, malformed } from "./ws-errors.js";
import { type FrameResult, socketUrl, streamPcm } from "./ws-stream.js";

/**
 * vendorE's live WebSocket, {baseUrl}/v1/tts/live, every frame a binary MessagePack map. Upgrade
 * headers: `Authorization: Bearer <key>` and `model: <model>`. The client sends
 * {event: "start", request: {text: "", format: "pcm", sample_rate, reference_id, latency, prosody}},
 * {event: "text", text} per sentence, {event: "flush"} and {event: "stop"}; the server answers
 * {event: "audio", audio: <bin>} frames, then {event: "finish", reason: "stop" | "error"}.
 * Some failures come as {event: "error", error | message} instead.
 */

export interface VendorESynthesizerOptions {
  baseUrl: string;
  apiKey: string;
  connectTimeoutMs?: number;
  /** Give up on a provider silent this long mid-stream (default 15 s). */
  idleTimeoutMs?: number;
}

export const VENDOR_E_MODELS = ["s1", "s2", "s2-pro", "s2.1-pro"] as const;
export const VENDOR_E_LATENCY_MODES = ["normal", "balanced", "low"] as const;
const PROVIDER = "vendorE";

export class VendorESynthesizer implements SpeechSynthesizer {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorESynthesizerOptions) {}

  async *synthesize(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    const chunks = splitSentences(request.text);
    if (chunks.length === 0) return;
    const model = stringSetting(request.settings, "model", "s2.1-pro");
    const latency = stringSetting(request.settings, "latency_mode", "balanced");
    if (!(VENDOR_E_MODELS as readonly string[]).includes(model)) {
      throw new ProviderError(PROVIDER, `unknown model ${model}`, "bad_request");
    }
    if (!(VENDOR_E_LATENCY_MODES as readonly string[]).includes(latency)) {
      throw new ProviderError(PROVIDER, `unknown latency mode ${latency}`, "bad_request");
    }
    const events: MsgpackValue[] = [
      {
        event: "start",
        request: {
          text: "",
          format: "pcm",
          sample_rate: SESSION_SAMPLE_RATE,
          reference_id: request.voiceId,
          latency,
          prosody: { speed: numberSetting(request.settings, "speed", 1) },
        },
      },
      ...chunks.map((chunk) => ({ event: "text", text: `${chunk} ` })),
      { event: "flush" },
      { event: "stop" },
    ];
    yield* streamPcm(
      {
        provider: PROVIDER,
        url: socketUrl(this.options.baseUrl, "/v1/tts/live"),
        headers: { authorization: `Bearer ${this.options.apiKey}`, model },
        signal,
        connectTimeoutMs: this.options.connectTimeoutMs,
        idleTimeoutMs: this.options.idleTimeoutMs,
      },
      {
        start: (send) => {
          for (const event of events) send(encodeMsgpack(event));
        },
        onFrame: readFrame,
      },
    );
  }
}

function readFrame(data: Buffer, isBinary: boolean): FrameResult | undefined {
  if (!isBinary) throw malformed(PROVIDER, "text frame on a MessagePack stream");
  let message: MsgpackValue;
  try {
    message = decodeMsgpack(data);
  } catch (err) {
    throw malformed(PROVIDER, err instanceof Error ? err.message : "undecodable", err);
  }
  if (
    typeof message !== "object" ||
    message === null ||
    Array.isArray(message) ||
    message instanceof Uint8Array
  ) {
    throw malformed(PROVIDER, "not a map");
  }
  if (typeof message.event !== "string") throw malformed(PROVIDER, "no event");
  switch (message.event) {
    case "audio":
      if (!(message.audio instanceof Uint8Array)) throw malformed(PROVIDER, "audio is not binary");
      return { audio: message.audio };
    case "finish":
      if (message.reason === "stop") return { done: true };
      throw new ProviderError(
        PROVIDER,
        `synthesis finished with ${describe(message)}`,
        kindFromText(describe(message)),
      );
    case "error":
      throw new ProviderError(PROVIDER, describe(message), kindFromText(describe(message)));
    default:
      // Unknown events are ignored, as the protocol asks, so it can grow.
      return undefined;
  }
}

function describe(message: { [key: string]: MsgpackValue }): string {
  const parts = [message.reason, message.error, message.message].filter(
    (p): p is string => typeof p === "string",
  );
  return parts.length > 0 ? parts.join(": ") : "an error";
}
