/**
 * vendorA's hosted conversational agent over its WebSocket:
 *   {baseUrl}/v1/convai/conversation?agent_id=..   (the key in the `xi-api-key` upgrade header)
 *
 * The client opens with `conversation_initiation_client_data` (dynamic variables, and a voice override
 * under `conversation_config_override.tts.voice_id`); the server confirms with
 * `conversation_initiation_metadata`, which names the agent's output and the user's input audio formats
 * (`pcm_16000`, `ulaw_8000`, ...). The user's audio goes out as `{user_audio_chunk: base64}`; the server
 * sends `audio {audio_event: {audio_base_64, event_id}}`, `agent_response`, `user_transcript`,
 * `interruption {interruption_event: {event_id}}` (audio of that event id or older is stale),
 * `ping {ping_event: {event_id}}` (answered with `pong`), `client_tool_call`, `agent_tool_response`, and
 * more. Every server event is also passed on untouched as a `raw` event, and raw client events can be
 * sent through (`sendRaw`).
 *
 * The agent hangs up by calling its `end_call` system tool (reported as an `agent_tool_response` with
 * that tool name) and closing the socket normally; either one is reported as `hang_up`, once.
 * Failures: a refused handshake answers an HTTP status (401/403 bad key, 429 too many requests); later
 * the server closes with a code and a reason (1008 for a bad key, quota or an override the agent does
 * not allow, 1011 for its own errors).
 */

import { SocketConversation } from "../realtime/socket-conversation.js";
import { connectWebSocket, toBase64 } from "../realtime/ws-connect.js";
import { errorFromClose, kindFromText } from "../tts/ws-errors.js";
import { decodeBase64, socketUrl } from "../tts/ws-stream.js";
import {
  type Conversation,
  type ConversationOptions,
  type ConversationProvider,
  ProviderError,
} from "../types.js";
import { parseWireFormat, WireAudioDecoder, WireAudioEncoder } from "./wire-audio.js";

const PROVIDER = "vendorA";
/** What the protocol uses when the metadata names no format. */
const DEFAULT_FORMAT = "pcm_16000";

export interface VendorAAgentOptions {
  baseUrl: string;
  /** Handshake plus the server's initiation metadata. Default 10 s. */
  connectTimeoutMs?: number;
}

export class VendorAAgent implements ConversationProvider {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorAAgentOptions) {}

  /** Resolves once the server has sent its initiation metadata. Aborting `signal` later closes it. */
  async connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation> {
    if (!options.agentId) throw new ProviderError(PROVIDER, "an agent id is required", "bad_request");
    const url = socketUrl(this.options.baseUrl, "/v1/convai/conversation", { agent_id: options.agentId });
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const conversation = new VendorAAgentConversation();
    const headers = { "xi-api-key": options.apiKey };
    const ws = await connectWebSocket(PROVIDER, url, { headers, timeoutMs, signal }, conversation);
    await conversation.start(ws, vendorAAgentInitiation(options), timeoutMs, signal);
    return conversation;
  }
}

export function vendorAAgentInitiation(options: ConversationOptions): object {
  const message: Record<string, unknown> = { type: "conversation_initiation_client_data" };
  if (options.voice) message.conversation_config_override = { tts: { voice_id: options.voice } };
  if (options.dynamicVariables && Object.keys(options.dynamicVariables).length > 0) {
    message.dynamic_variables = { ...options.dynamicVariables };
  }
  return message;
}

type Message = Record<string, unknown>;

class VendorAAgentConversation extends SocketConversation {
  private decoder: WireAudioDecoder | undefined;
  private encoder: WireAudioEncoder | undefined;
  /** Audio events with this id or an older one belong to an interrupted response. */
  private interruptedUpTo = -1;
  private lastAudioEventId = -1;
  private hungUp = false;

  constructor() {
    super(PROVIDER);
  }

  sendAudio(pcm: Uint8Array): void {
    const audio = this.encoder?.encode(pcm);
    if (audio && audio.length > 0) this.send({ user_audio_chunk: toBase64(audio) });
  }

  sendText(text: string): void {
    this.send({ type: "user_message", text });
  }

  /** A client event as the protocol spells it: `data` holds its fields besides `type`. */
  sendRaw(eventType: string, data: unknown): void {
    const fields = typeof data === "object" && data !== null && !Array.isArray(data) ? data : {};
    this.send({ ...fields, type: eventType });
  }

  /**
   * The protocol has no client message that stops the agent (it listens for the user's voice itself),
   * so the client drops the rest of the response being played.
   */
  interrupt(): void {
    this.interruptedUpTo = Math.max(this.interruptedUpTo, this.lastAudioEventId);
  }

  override onClose(code: number, reason: string): void {
    // The server ending the conversation normally is the agent hanging up.
    if (!this.closed && !this.configuring && code === 1000) {
      this.hangUp();
      this.closed = true;
    }
    super.onClose(code, reason);
  }

  protected override closeError(code: number, reason: string): ProviderError {
    return errorFromClose(PROVIDER, code, reason);
  }

  protected handle(message: Message): void {
    const type = message.type;
    if (typeof type !== "string") {
      this.emitError("malformed server message: no type", "unavailable");
      return;
    }
    this.events.push({ type: "raw", eventType: type, data: message });
    switch (type) {
      case "conversation_initiation_metadata":
        this.onMetadata(field(message, "conversation_initiation_metadata_event"));
        return;
      case "audio":
        this.onAudio(field(message, "audio_event"));
        return;
      case "agent_response": {
        const text = field(message, "agent_response_event").agent_response;
        if (typeof text === "string") this.events.push({ type: "agent_transcript", text, final: true });
        return;
      }
      case "user_transcript": {
        const text = field(message, "user_transcription_event").user_transcript;
        if (typeof text === "string") this.events.push({ type: "user_transcript", text, final: true });
        return;
      }
      case "interruption": {
        const eventId = field(message, "interruption_event").event_id;
        if (typeof eventId === "number") this.interruptedUpTo = Math.max(this.interruptedUpTo, eventId);
        this.events.push({ type: "interrupted" });
        return;
      }
      case "ping":
        this.send({ type: "pong", event_id: field(message, "ping_event").event_id });
        return;
      case "agent_tool_response": {
        const tool = field(message, "agent_tool_response");
        if (tool.tool_name === "end_call" && tool.is_error !== true) this.hangUp();
        return;
      }
      case "agent_response_complete":
        this.events.push({ type: "turn_done" });
        return;
      case "error": {
        const text = [message.code, message.message, message.error]
          .filter((v) => typeof v === "string")
          .join(": ");
        this.emitError(text || "error", kindFromText(text));
        return;
      }
      default:
      // Everything else (tool calls, corrections, VAD scores, ...) is for the client: the raw event.
    }
  }

  private onMetadata(metadata: Message): void {
    const output = stringOr(metadata.agent_output_audio_format, DEFAULT_FORMAT);
    const input = stringOr(metadata.user_input_audio_format, DEFAULT_FORMAT);
    const outputFormat = parseWireFormat(output);
    const inputFormat = parseWireFormat(input);
    if (!outputFormat || !inputFormat) {
      this.failSetup(
        new ProviderError(
          PROVIDER,
          `unsupported audio format ${outputFormat ? input : output}`,
          "bad_request",
        ),
      );
      return;
    }
    this.decoder = new WireAudioDecoder(outputFormat);
    this.encoder = new WireAudioEncoder(inputFormat);
    this.configured();
  }

  private onAudio(audio: Message): void {
    const eventId = typeof audio.event_id === "number" ? audio.event_id : this.lastAudioEventId;
    if (eventId <= this.interruptedUpTo) return;
    this.lastAudioEventId = eventId;
    const bytes = typeof audio.audio_base_64 === "string" ? decodeBase64(audio.audio_base_64) : undefined;
    if (!bytes) {
      this.emitError("malformed audio event: audio_base_64 is not base64", "unavailable");
      return;
    }
    const pcm = this.decoder?.decode(bytes);
    if (pcm && pcm.length > 0) this.events.push({ type: "audio", pcm });
  }

  private hangUp(): void {
    if (this.hungUp) return;
    this.hungUp = true;
    this.events.push({ type: "hang_up" });
  }
}

/** A nested object of a message, or an empty one. */
function field(message: Message, name: string): Message {
  const value = message[name];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Message) : {};
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" && value !== "" ? value : fallback;
}
