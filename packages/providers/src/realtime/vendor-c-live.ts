/**
 * vendorC's realtime models over its bidirectional-streaming "BidiGenerateContent" WebSocket protocol.
 * The key goes in the `key` query parameter. Every message is a JSON object with exactly one top-level
 * field: the client sends `setup` first and waits for `setupComplete`, then `realtimeInput` (audio as
 * PCM 16 kHz base64, or text); the server answers `serverContent` (the model's audio as PCM 24 kHz in
 * `modelTurn.parts[].inlineData`, transcriptions, `interrupted`, `turnComplete`) and `goAway` before it
 * ends a connection. The server detects the user's turns itself.
 */
import { PcmResampler } from "../audio/stream-resampler.js";
import {
  type Conversation,
  type ConversationOptions,
  type ConversationProvider,
  ProviderError,
  SESSION_SAMPLE_RATE,
} from "../types.js";
import { SocketConversation } from "./socket-conversation.js";
import { connectWebSocket, fromBase64, toBase64 } from "./ws-connect.js";

export const VENDOR_C_DEFAULT_MODEL = "vendorC-3.1-flash-live-preview";
export const VENDOR_C_DEFAULT_VOICE = "Puck";
/** The protocol's input audio format. */
export const VENDOR_C_INPUT_RATE = 16_000;
const INPUT_MIME_TYPE = `audio/pcm;rate=${VENDOR_C_INPUT_RATE}`;

export interface VendorCLiveOptions {
  /** The BidiGenerateContent WebSocket endpoint (full path, without the key). */
  baseUrl: string;
  name?: string;
  /** Handshake plus setup. Default 10 s. */
  connectTimeoutMs?: number;
}

export class VendorCLive implements ConversationProvider {
  readonly name: string;

  constructor(private readonly options: VendorCLiveOptions) {
    this.name = options.name ?? "vendorC";
  }

  /** Resolves once the server has answered `setupComplete`. Aborting `signal` later closes it. */
  async connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation> {
    const model = options.model ?? VENDOR_C_DEFAULT_MODEL;
    const url = new URL(this.options.baseUrl);
    url.searchParams.set("key", options.apiKey);
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const conversation = new VendorCConversation(this.name, textGoesInClientContent(model));
    const ws = await connectWebSocket(this.name, url.toString(), { timeoutMs, signal }, conversation);
    await conversation.start(ws, vendorCSetupMessage(model, options), timeoutMs, signal);
    return conversation;
  }
}

export function vendorCSetupMessage(model: string, options: ConversationOptions): object {
  const generationConfig: Record<string, unknown> = {
    responseModalities: ["AUDIO"],
    speechConfig: {
      voiceConfig: { prebuiltVoiceConfig: { voiceName: options.voice ?? VENDOR_C_DEFAULT_VOICE } },
    },
  };
  if (options.temperature !== undefined) generationConfig.temperature = options.temperature;
  const setup: Record<string, unknown> = {
    model: model.startsWith("models/") ? model : `models/${model}`,
    generationConfig,
    // Empty objects switch on the transcription of both sides.
    inputAudioTranscription: {},
    outputAudioTranscription: {},
  };
  if (options.instructions) setup.systemInstruction = { parts: [{ text: options.instructions }] };
  return { setup };
}

/**
 * The 2.5 family takes text during the conversation as `clientContent` turns; later families take it
 * only as `realtimeInput.text` (their `clientContent` seeds history at the start).
 */
function textGoesInClientContent(model: string): boolean {
  return model.includes("-2.5-");
}

interface Part {
  inlineData?: { data?: unknown; mimeType?: unknown };
}

interface ServerContent {
  interrupted?: boolean;
  inputTranscription?: { text?: unknown };
  modelTurn?: { parts?: Part[] };
  outputTranscription?: { text?: unknown };
  turnComplete?: boolean;
}

class VendorCConversation extends SocketConversation {
  private readonly input = new PcmResampler(SESSION_SAMPLE_RATE, VENDOR_C_INPUT_RATE);
  private readonly outputResamplers = new Map<number, PcmResampler>();
  /** The model is producing a turn (audio or its transcript arrived, no turnComplete yet). */
  private modelTurn = false;
  /** The client interrupted the current model turn: drop the rest of it. */
  private discarding = false;
  private userText = "";
  private agentText = "";

  constructor(
    provider: string,
    private readonly clientContentText: boolean,
  ) {
    super(provider);
  }

  sendAudio(pcm: Uint8Array): void {
    const resampled = this.input.process(pcm);
    if (resampled.length === 0) return;
    this.send({ realtimeInput: { audio: { data: toBase64(resampled), mimeType: INPUT_MIME_TYPE } } });
  }

  sendText(text: string): void {
    if (this.clientContentText) {
      this.send({ clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true } });
    } else {
      this.send({ realtimeInput: { text } });
    }
  }

  /**
   * The protocol has no message that cancels a turn while the server detects activity itself, so the
   * client drops the rest of the current turn; the model stops on its own when the user speaks.
   */
  interrupt(): void {
    if (this.modelTurn) this.discarding = true;
  }

  protected handle(message: Record<string, unknown>): void {
    if ("setupComplete" in message) {
      this.configured();
      return;
    }
    if (message.serverContent) {
      this.onContent(message.serverContent as ServerContent);
      return;
    }
    if (message.goAway) {
      const timeLeft = (message.goAway as { timeLeft?: unknown }).timeLeft;
      this.emitError(`the server ends the connection in ${String(timeLeft ?? "a moment")}`, "unavailable");
      return;
    }
    // usageMetadata, sessionResumptionUpdate, toolCall: nothing to report.
  }

  protected override closeError(code: number, reason: string): ProviderError {
    const detail = `${this.provider}: connection closed (${code}${reason ? ` ${reason}` : ""})`;
    return new ProviderError(this.provider, detail, vendorCCloseKind(code, reason));
  }

  private onContent(content: ServerContent): void {
    if (content.interrupted) {
      // The user spoke over the model: the server stopped the turn.
      this.finishUserText();
      this.endModelTurn();
      this.events.push({ type: "interrupted" });
    }
    const heard = content.inputTranscription?.text;
    if (typeof heard === "string" && heard !== "") {
      this.userText += heard;
      this.events.push({ type: "user_transcript", text: heard, final: false });
    }
    for (const part of content.modelTurn?.parts ?? []) this.onPart(part);
    const said = content.outputTranscription?.text;
    if (typeof said === "string" && said !== "") {
      this.startModelTurn();
      if (!this.discarding) {
        this.agentText += said;
        this.events.push({ type: "agent_transcript", text: said, final: false });
      }
    }
    if (content.turnComplete) {
      this.finishUserText();
      if (this.agentText && !this.discarding)
        this.events.push({ type: "agent_transcript", text: this.agentText, final: true });
      this.endModelTurn();
      this.events.push({ type: "turn_done" });
    }
  }

  private onPart(part: Part): void {
    const data = part.inlineData?.data;
    if (typeof data !== "string") return;
    this.startModelTurn();
    if (this.discarding) return;
    const rate = rateOf(part.inlineData?.mimeType) ?? SESSION_SAMPLE_RATE;
    let pcm = fromBase64(data);
    if (rate !== SESSION_SAMPLE_RATE) {
      let resampler = this.outputResamplers.get(rate);
      if (!resampler) {
        resampler = new PcmResampler(rate, SESSION_SAMPLE_RATE);
        this.outputResamplers.set(rate, resampler);
      }
      pcm = resampler.process(pcm);
    }
    if (pcm.length > 0) this.events.push({ type: "audio", pcm });
  }

  /** The first output of a turn also closes what the user said before it. */
  private startModelTurn(): void {
    if (this.modelTurn) return;
    this.modelTurn = true;
    this.finishUserText();
  }

  private endModelTurn(): void {
    this.modelTurn = false;
    this.discarding = false;
    this.agentText = "";
  }

  private finishUserText(): void {
    if (!this.userText) return;
    this.events.push({ type: "user_transcript", text: this.userText, final: true });
    this.userText = "";
  }
}

/** `audio/pcm;rate=24000` -> 24000. */
function rateOf(mimeType: unknown): number | undefined {
  if (typeof mimeType !== "string") return undefined;
  const match = /rate=(\d+)/.exec(mimeType);
  return match ? Number(match[1]) : undefined;
}

/**
 * The server ends a failed session by closing with a code and a reason: 1008 (policy) for a bad key,
 * 1011 with a quota message when rate limited, 1007 for an invalid request.
 */
export function vendorCCloseKind(code: number, reason: string): ProviderError["kind"] {
  if (/api key|permission|unauthenticated|unauthorized/i.test(reason)) return "unauthorized";
  if (/quota|resource.?exhausted|rate limit|too many requests/i.test(reason)) return "rate_limited";
  if (code === 1007 || /invalid|not found|not supported/i.test(reason)) return "bad_request";
  return "unavailable";
}
