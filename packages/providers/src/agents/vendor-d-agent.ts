/**
 * vendorD's hosted ("managed") voice agent over its agent WebSocket:
 *   {baseUrl}/v1/agents/websocket/{agent_id}
 * Server applications authenticate with the key in the `X-API-Key` upgrade header and name the API
 * version in a version header (its name is configurable, like the vendor's TTS client does).
 *
 * All messages are JSON text frames with a `type`; audio travels base64-encoded inside them. The
 * client's first message is `session_create {audio: {input_format, output_delivery}}`, confirmed by
 * `session_ready {call_id, agent_id, audio}`. The user's audio goes out as `audio_input {audio}`;
 * the server sends `audio_output {audio}`, `audio_output_clear` (the agent stopped: drop what is
 * queued), `turn_started {turn, role}`, `turn_output_text_delta {role, text}`,
 * `turn_ended {role, text, interrupted}`, `client_tool_call {tool_call_id, tool_name, parameters,
 * expects_response}`, `dtmf_output` and `error {code, message, fatal}`.
 *
 * Assumptions where the published reference is silent: the agent's audio comes back in the encoding
 * and rate named by `input_format` (so the client asks for `pcm_24000`, the session's own format, and
 * neither direction is resampled; a `session_ready` that names another format is honoured); the agent
 * ending the call is a normal (1000) close by the server, reported as the end of the events without an
 * error and not as `hang_up` (the interface reserves the agent hang-up reason for vendorA); a fatal
 * `error` ends the conversation, a non-fatal one is reported and the conversation goes on. Client tools
 * cannot run here: a tool call that expects a response is answered with an error result so the agent
 * does not wait for it.
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
  SESSION_SAMPLE_RATE,
} from "../types.js";
import { parseWireFormat, WireAudioDecoder, WireAudioEncoder } from "./wire-audio.js";

const PROVIDER = "vendorD";
const INPUT_FORMAT = `pcm_${SESSION_SAMPLE_RATE}`;
const DEFAULT_API_VERSION = "2026-08-14";
const DEFAULT_VERSION_HEADER = "vendorD-Version";

export interface VendorDAgentOptions {
  baseUrl: string;
  /** API version sent with every connection. */
  apiVersion?: string;
  /** Name of the version header (the vendor's own name for it is configured by the operator). */
  versionHeader?: string;
  /** `speaking_pace` (default): the server paces the agent's audio in real time. */
  outputDelivery?: string;
  /** Handshake plus session_ready. Default 10 s. */
  connectTimeoutMs?: number;
}

export class VendorDAgent implements ConversationProvider {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorDAgentOptions) {}

  /** Resolves once the server has answered `session_ready`. Aborting `signal` later closes it. */
  async connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation> {
    if (!options.agentId) throw new ProviderError(PROVIDER, "an agent id is required", "bad_request");
    const url = socketUrl(
      this.options.baseUrl,
      `/v1/agents/websocket/${encodeURIComponent(options.agentId)}`,
    );
    const headers = {
      "X-API-Key": options.apiKey,
      [this.options.versionHeader ?? DEFAULT_VERSION_HEADER]: this.options.apiVersion ?? DEFAULT_API_VERSION,
    };
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const conversation = new VendorDAgentConversation();
    const ws = await connectWebSocket(PROVIDER, url, { headers, timeoutMs, signal }, conversation);
    const create = {
      type: "session_create",
      audio: { input_format: INPUT_FORMAT, output_delivery: this.options.outputDelivery ?? "speaking_pace" },
    };
    await conversation.start(ws, create, timeoutMs, signal);
    return conversation;
  }
}

type Message = Record<string, unknown>;

class VendorDAgentConversation extends SocketConversation {
  private decoder: WireAudioDecoder | undefined;
  private readonly encoder = new WireAudioEncoder({ encoding: "pcm", sampleRate: SESSION_SAMPLE_RATE });
  /** The client interrupted the agent: drop its audio until its next turn. */
  private discarding = false;

  constructor() {
    super(PROVIDER);
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.configuring) return;
    const audio = this.encoder.encode(pcm);
    if (audio.length > 0) this.send({ type: "audio_input", audio: toBase64(audio) });
  }

  /** The protocol has no message that stops the agent: the client drops the rest of its turn. */
  interrupt(): void {
    this.discarding = true;
  }

  override onClose(code: number, reason: string): void {
    // The agent ending the call closes normally: the events end without an error.
    if (!this.closed && !this.configuring && code === 1000) this.closed = true;
    super.onClose(code, reason);
  }

  protected override closeError(code: number, reason: string): ProviderError {
    return errorFromClose(PROVIDER, code, reason);
  }

  protected handle(message: Message): void {
    switch (message.type) {
      case "session_ready":
        this.onReady(message);
        return;
      case "audio_output":
        this.onAudio(message.audio);
        return;
      case "audio_output_clear":
        this.discarding = false;
        this.events.push({ type: "interrupted" });
        return;
      case "turn_started":
        if (message.role === "assistant") this.discarding = false;
        return;
      case "turn_output_text_delta":
        if (message.role === "assistant" && typeof message.text === "string" && !this.discarding) {
          this.events.push({ type: "agent_transcript", text: message.text, final: false });
        }
        return;
      case "turn_ended":
        this.onTurnEnded(message);
        return;
      case "client_tool_call":
        if (message.expects_response === true) {
          this.send({
            type: "client_tool_result",
            tool_call_id: message.tool_call_id,
            result: "client tools are not available in this session",
            is_error: true,
          });
        }
        return;
      case "error":
        this.onError(message);
        return;
      default:
      // dtmf_output and later additions: nothing for the session.
    }
  }

  private onReady(message: Message): void {
    const audio = (message.audio ?? {}) as { input_format?: unknown };
    const name = typeof audio.input_format === "string" ? audio.input_format : INPUT_FORMAT;
    const format = parseWireFormat(name);
    if (!format) {
      this.failSetup(new ProviderError(PROVIDER, `unsupported audio format ${name}`, "bad_request"));
      return;
    }
    this.decoder = new WireAudioDecoder(format);
    this.configured();
  }

  private onAudio(audio: unknown): void {
    const bytes = typeof audio === "string" ? decodeBase64(audio) : undefined;
    if (!bytes) {
      this.emitError("malformed audio_output: audio is not base64", "unavailable");
      return;
    }
    if (this.discarding) return;
    const pcm = this.decoder?.decode(bytes);
    if (pcm && pcm.length > 0) this.events.push({ type: "audio", pcm });
  }

  private onTurnEnded(message: Message): void {
    const text = typeof message.text === "string" ? message.text : "";
    if (message.role === "user") {
      if (text) this.events.push({ type: "user_transcript", text, final: true });
      return;
    }
    if (message.role !== "assistant") return;
    if (text) this.events.push({ type: "agent_transcript", text, final: true });
    this.events.push({ type: "turn_done" });
  }

  private onError(message: Message): void {
    const code = typeof message.code === "string" ? message.code : "error";
    const text = typeof message.message === "string" ? message.message : "";
    const kind = kindFromText(`${code} ${text}`, /^invalid/.test(code) ? "bad_request" : "unavailable");
    if (this.configuring) {
      this.failSetup(new ProviderError(PROVIDER, `${code}: ${text}`, kind));
      return;
    }
    this.emitError(`${code}: ${text}`, kind);
    if (message.fatal === true) this.close();
  }
}
