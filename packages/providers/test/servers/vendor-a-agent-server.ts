/**
 * A local peer for vendorA's conversational-agent WebSocket. The handshake checks the `xi-api-key`
 * header (401 otherwise) and that an agent_id is given (400 otherwise). The first client message must
 * be `conversation_initiation_client_data`; the peer refuses a voice override when the agent does not
 * allow one (a 1008 close, as the vendor does), otherwise it answers with
 * `conversation_initiation_metadata` naming its audio formats. It checks every client event (known
 * types, strict base64 audio, pongs that answer a ping it sent) and sends the vendor's server events
 * on request, including the agent hanging up: `agent_tool_response` for `end_call`, then a 1000 close.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { isBase64 } from "./realtime-audio-fixtures.js";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

/** How the next conversations behave; tests change it before they connect. */
export interface VendorAAgentBehaviour {
  outputFormat: string;
  inputFormat: string;
  allowVoiceOverride: boolean;
  /** Never answers the initiation. */
  silent: boolean;
}

export function defaultAgentBehaviour(): VendorAAgentBehaviour {
  return { outputFormat: "pcm_16000", inputFormat: "pcm_16000", allowVoiceOverride: true, silent: false };
}

const CLIENT_TYPES = new Set([
  "pong",
  "client_tool_result",
  "contextual_update",
  "user_message",
  "user_activity",
]);

export async function startVendorAAgentServer(
  apiKey: string,
  behaviour: VendorAAgentBehaviour,
): Promise<WsTestServer<VendorAAgentPeer>> {
  return WsTestServer.start<VendorAAgentPeer>(
    "/v1/convai/conversation",
    (req, url) => {
      if (req.headers["xi-api-key"] !== apiKey) {
        return { status: 401, body: { detail: { status: "invalid_api_key", message: "Invalid API key" } } };
      }
      if (!url.searchParams.get("agent_id")) return { status: 400, body: { detail: "agent_id is required" } };
      return undefined;
    },
    (ws, req, url) => new VendorAAgentPeer(ws, req, url, { ...behaviour }),
  );
}

export class VendorAAgentPeer extends SttPeer {
  /** The decoded user audio, one entry per chunk. */
  readonly userAudio: Uint8Array[] = [];
  private initiated = false;
  private readonly pings = new Set<number>();

  constructor(
    ws: WebSocket,
    req: IncomingMessage,
    url: URL,
    readonly behaviour: VendorAAgentBehaviour,
  ) {
    super(ws, req, url);
  }

  sendAudio(audio: Uint8Array, eventId: number): void {
    this.send({
      type: "audio",
      audio_event: { audio_base_64: Buffer.from(audio).toString("base64"), event_id: eventId },
    });
  }

  sendAgentResponse(text: string): void {
    this.send({ type: "agent_response", agent_response_event: { agent_response: text } });
  }

  sendUserTranscript(text: string): void {
    this.send({ type: "user_transcript", user_transcription_event: { user_transcript: text } });
  }

  sendInterruption(eventId: number): void {
    this.send({ type: "interruption", interruption_event: { event_id: eventId } });
  }

  ping(eventId: number): void {
    this.pings.add(eventId);
    this.send({ type: "ping", ping_event: { event_id: eventId, ping_ms: 12 } });
  }

  /** The agent calls its end_call tool, then the server closes the conversation normally. */
  endCall(): void {
    this.send({
      type: "agent_tool_response",
      agent_tool_response: {
        tool_name: "end_call",
        tool_call_id: "call-9",
        tool_type: "system",
        is_error: false,
      },
    });
    this.closeWith(1000);
  }

  protected onBinary(): void {
    this.violation("binary frame");
    this.closeWith(1003, "Binary frames are not supported");
  }

  protected onJson(message: Record<string, unknown>): void {
    if (!this.initiated) {
      this.onInitiation(message);
      return;
    }
    if ("user_audio_chunk" in message) {
      if (!isBase64(message.user_audio_chunk) || Object.keys(message).length !== 1) {
        this.violation(`bad audio chunk ${JSON.stringify(message).slice(0, 80)}`);
        return;
      }
      this.userAudio.push(new Uint8Array(Buffer.from(message.user_audio_chunk, "base64")));
      return;
    }
    if (typeof message.type !== "string" || !CLIENT_TYPES.has(message.type)) {
      this.violation(`unknown client event ${JSON.stringify(message)}`);
      return;
    }
    if (message.type === "pong" && !this.pings.delete(message.event_id as number)) {
      this.violation(`pong for an unknown ping ${String(message.event_id)}`);
    }
  }

  private onInitiation(message: Record<string, unknown>): void {
    if (message.type !== "conversation_initiation_client_data") {
      this.violation(`first message ${JSON.stringify(message)}`);
      this.closeWith(1008, "Invalid message received");
      return;
    }
    const override = message.conversation_config_override as { tts?: { voice_id?: unknown } } | undefined;
    if (override?.tts?.voice_id !== undefined && !this.behaviour.allowVoiceOverride) {
      this.closeWith(1008, "Override for field 'voice_id' is not allowed by config.");
      return;
    }
    this.initiated = true;
    if (this.behaviour.silent) return;
    this.send({
      type: "conversation_initiation_metadata",
      conversation_initiation_metadata_event: {
        conversation_id: "conv-1",
        agent_output_audio_format: this.behaviour.outputFormat,
        user_input_audio_format: this.behaviour.inputFormat,
      },
    });
  }
}
