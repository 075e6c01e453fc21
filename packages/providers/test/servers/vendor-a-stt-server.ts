/**
 * A local peer for vendorA's realtime speech-to-text WebSocket. The handshake checks the `xi-api-key`
 * header (401 otherwise) and the query (model_id, audio_format pcm_16000, language_code, a commit
 * strategy; 400 otherwise). A session opens with session_started, or with the error a test asks for
 * followed by a close. Every input_audio_chunk must carry strict base64, a boolean `commit` and
 * sample_rate 16000 (an input_error and a close otherwise); a commit is answered with the replies the
 * test queued.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { isBase64 } from "./realtime-audio-fixtures.js";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

/** How the next sessions open; tests change it before they open a stream. */
export interface VendorASttBehaviour {
  /** An error message sent instead of session_started, then a 1008 close. */
  startError?: { message_type: string; error: string };
}

export async function startVendorASttServer(
  apiKey: string,
  behaviour: VendorASttBehaviour,
): Promise<WsTestServer<VendorASttPeer>> {
  return WsTestServer.start<VendorASttPeer>(
    "/v1/speech-to-text/realtime",
    (req, url) => {
      if (req.headers["xi-api-key"] !== apiKey) {
        return { status: 401, body: { detail: { status: "invalid_api_key", message: "Invalid API key" } } };
      }
      const q = url.searchParams;
      if (!q.get("model_id") || q.get("audio_format") !== "pcm_16000" || !q.get("language_code")) {
        return { status: 400, body: { detail: { status: "invalid_request", message: "bad query" } } };
      }
      if (!["vad", "manual"].includes(q.get("commit_strategy") ?? "")) {
        return {
          status: 400,
          body: { detail: { status: "invalid_request", message: "bad commit_strategy" } },
        };
      }
      return undefined;
    },
    (ws, req, url) => new VendorASttPeer(ws, req, url, behaviour),
  );
}

export class VendorASttPeer extends SttPeer {
  /** Messages sent, in order, when a chunk with `commit: true` arrives. */
  readonly commitReplies: Record<string, unknown>[] = [];
  private readonly chunks: Uint8Array[] = [];

  constructor(ws: WebSocket, req: IncomingMessage, url: URL, behaviour: VendorASttBehaviour) {
    super(ws, req, url);
    if (behaviour.startError) {
      this.fail(behaviour.startError.message_type, behaviour.startError.error);
      return;
    }
    this.send({
      message_type: "session_started",
      session_id: "stt-session-1",
      config: {
        sample_rate: 16_000,
        audio_format: "pcm_16000",
        language_code: url.searchParams.get("language_code"),
        model_id: url.searchParams.get("model_id"),
        commit_strategy: url.searchParams.get("commit_strategy"),
      },
    });
  }

  /** The decoded audio of every chunk. */
  get audio(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.chunks));
  }

  get audioChunks(): Uint8Array[] {
    return this.chunks;
  }

  fail(type: string, error: string): void {
    this.send({ message_type: type, error });
    this.closeWith(1008, error);
  }

  protected onBinary(): void {
    this.violation("binary frame");
    this.fail("input_error", "Binary frames are not supported");
  }

  protected onJson(message: Record<string, unknown>): void {
    if (message.message_type !== "input_audio_chunk") {
      this.violation(`unknown message ${JSON.stringify(message)}`);
      this.fail("input_error", `Unknown message type ${String(message.message_type)}`);
      return;
    }
    const keys = Object.keys(message).sort().join(",");
    if (keys !== "audio_base_64,commit,message_type,sample_rate") this.violation(`fields ${keys}`);
    if (
      !isBase64(message.audio_base_64) ||
      typeof message.commit !== "boolean" ||
      message.sample_rate !== 16_000
    ) {
      this.violation(`bad chunk ${JSON.stringify(message).slice(0, 120)}`);
      this.fail("input_error", "Invalid audio chunk");
      return;
    }
    this.chunks.push(new Uint8Array(Buffer.from(message.audio_base_64, "base64")));
    if (message.commit) for (const reply of this.commitReplies) this.send(reply);
  }
}
