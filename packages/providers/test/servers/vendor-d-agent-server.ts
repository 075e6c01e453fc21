/**
 * A local peer for vendorD's managed-agent WebSocket, serving one agent id. The handshake checks the
 * `X-API-Key` header (401 otherwise) and a dated version header (400 otherwise); other agent ids get
 * 404. The first message must be `session_create` with a known input format and an output delivery;
 * it is answered with `session_ready` (or, when a test asks, with a fatal error and a close). Then it
 * checks every client event (known types, strict base64 audio), answers unknown ones with a non-fatal
 * `invalid_event` error like the vendor, and sends the vendor's server events on request.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { isBase64 } from "./realtime-audio-fixtures.js";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

export const VENDOR_D_AGENT_ID = "agent_7Hq2m";
const INPUT_FORMATS = ["mulaw_8000", "pcm_16000", "pcm_24000", "pcm_44100"];

/** How the next sessions start; tests change it before they connect. */
export interface VendorDAgentBehaviour {
  /** A fatal error instead of session_ready, then a 1008 close. */
  startError?: { code: string; message: string };
  /** The input format session_ready reports, when not the one asked for. */
  readyFormat?: string;
  silent: boolean;
}

export async function startVendorDAgentServer(
  apiKey: string,
  versionHeader: string,
  behaviour: VendorDAgentBehaviour,
): Promise<WsTestServer<VendorDAgentPeer>> {
  return WsTestServer.start<VendorDAgentPeer>(
    `/v1/agents/websocket/${VENDOR_D_AGENT_ID}`,
    (req) => {
      if (req.headers["x-api-key"] !== apiKey) return { status: 401, body: { error: "Invalid API key" } };
      const version = req.headers[versionHeader.toLowerCase()];
      if (typeof version !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(version)) {
        return { status: 400, body: { error: "Missing or invalid API version" } };
      }
      return undefined;
    },
    (ws, req, url) => new VendorDAgentPeer(ws, req, url, { ...behaviour }),
  );
}

export class VendorDAgentPeer extends SttPeer {
  readonly userAudio: Uint8Array[] = [];
  private started = false;

  constructor(
    ws: WebSocket,
    req: IncomingMessage,
    url: URL,
    private readonly behaviour: VendorDAgentBehaviour,
  ) {
    super(ws, req, url);
  }

  sendAudio(pcm: Uint8Array): void {
    this.send({ type: "audio_output", audio: Buffer.from(pcm).toString("base64") });
  }

  error(code: string, message: string, fatal: boolean): void {
    this.send({ type: "error", code, message, fatal });
    if (fatal) this.closeWith(1008, code);
  }

  protected onBinary(): void {
    this.violation("binary frame");
    this.error("invalid_event", "Binary frames are not supported", false);
  }

  protected onJson(message: Record<string, unknown>): void {
    if (!this.started) {
      this.onCreate(message);
      return;
    }
    switch (message.type) {
      case "audio_input":
        if (!isBase64(message.audio) || Object.keys(message).length !== 2) {
          this.violation(`bad audio_input ${JSON.stringify(message).slice(0, 80)}`);
          this.error("invalid_event", "audio must be base64", false);
          return;
        }
        this.userAudio.push(new Uint8Array(Buffer.from(message.audio, "base64")));
        return;
      case "client_tool_result":
      case "dtmf_input":
        return;
      default:
        this.violation(`unknown event ${JSON.stringify(message)}`);
        this.error("invalid_event", `unknown event type ${String(message.type)}`, false);
    }
  }

  private onCreate(message: Record<string, unknown>): void {
    const audio = message.audio as { input_format?: unknown; output_delivery?: unknown } | undefined;
    if (
      message.type !== "session_create" ||
      !INPUT_FORMATS.includes(String(audio?.input_format)) ||
      typeof audio?.output_delivery !== "string"
    ) {
      this.violation(`first message ${JSON.stringify(message)}`);
      this.error("invalid_event", "the first event must be a valid session_create", true);
      return;
    }
    if (this.behaviour.startError) {
      this.error(this.behaviour.startError.code, this.behaviour.startError.message, true);
      return;
    }
    if (this.behaviour.silent) return;
    this.started = true;
    this.send({
      type: "session_ready",
      call_id: "ac_gqkgRWUz2u",
      agent_id: VENDOR_D_AGENT_ID,
      agent_version_id: "av_1",
      audio: {
        input_format: this.behaviour.readyFormat ?? audio.input_format,
        output_delivery: audio.output_delivery,
      },
    });
  }
}
