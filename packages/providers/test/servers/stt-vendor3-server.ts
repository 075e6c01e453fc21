/**
 * A local peer for sttvendor3's realtime WebSocket. The handshake checks `Authorization: Bearer <key>`
 * (401 otherwise). The first message must be a StartRecognition for raw pcm_s16le 16 kHz audio with a
 * language and partials on; it is answered with RecognitionStarted (or, when the account is over its
 * quota, Error quota_exceeded and a 4005 close). Audio before RecognitionStarted is a protocol error.
 * Every binary frame is acknowledged with AudioAdded; EndOfStream must name the last frame's number and
 * is answered with the transcripts still in flight, EndOfTranscript and a 1000 close.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

/** How the next sessions answer StartRecognition; tests change it before they open a stream. */
export interface SttVendor3Behaviour {
  /** Answer with a quota error, as the vendor does for an account over its limit. */
  overQuota: boolean;
  /** Never answer. */
  silent: boolean;
}

export async function startSttVendor3Server(
  apiKey: string,
  behaviour: SttVendor3Behaviour,
): Promise<WsTestServer<SttVendor3Peer>> {
  return WsTestServer.start<SttVendor3Peer>(
    "/v2",
    (req) =>
      req.headers.authorization === `Bearer ${apiKey}`
        ? undefined
        : { status: 401, body: { message: "Unauthorized", detail: "invalid api key" } },
    (ws, req, url) => new SttVendor3Peer(ws, req, url, behaviour),
  );
}

export class SttVendor3Peer extends SttPeer {
  /** Transcripts the server still has when EndOfStream arrives. */
  readonly flushOnEnd: Record<string, unknown>[] = [];
  private started = false;
  private sequence = 0;

  constructor(
    ws: WebSocket,
    req: IncomingMessage,
    url: URL,
    private readonly behaviour: SttVendor3Behaviour,
  ) {
    super(ws, req, url);
  }

  get audio(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.binaryFrames));
  }

  sendTranscript(text: string, final: boolean): void {
    this.send(transcript(text, final));
  }

  fail(type: string, reason: string, code: number): void {
    this.send({ message: "Error", type, reason });
    this.closeWith(code, type);
  }

  protected onBinary(): void {
    if (!this.started) {
      this.violation("audio before RecognitionStarted");
      this.fail("protocol_error", "Audio received before RecognitionStarted", 1003);
      return;
    }
    this.sequence += 1;
    this.send({ message: "AudioAdded", seq_no: this.sequence });
  }

  protected onJson(message: Record<string, unknown>): void {
    if (message.message === "StartRecognition") {
      this.onStart(message);
      return;
    }
    if (message.message === "EndOfStream") {
      if (message.last_seq_no !== this.sequence) {
        this.violation(`EndOfStream last_seq_no ${String(message.last_seq_no)}, sent ${this.sequence}`);
      }
      for (const pending of this.flushOnEnd) this.send(pending);
      this.send({ message: "EndOfTranscript" });
      this.closeWith(1000);
      return;
    }
    this.violation(`unknown message ${JSON.stringify(message)}`);
    this.fail("invalid_message", `Unknown message ${String(message.message)}`, 1003);
  }

  private onStart(message: Record<string, unknown>): void {
    if (this.started) {
      this.fail("protocol_error", "StartRecognition sent twice", 1003);
      return;
    }
    const format = message.audio_format as Record<string, unknown> | undefined;
    const config = message.transcription_config as Record<string, unknown> | undefined;
    if (format?.type !== "raw" || format.encoding !== "pcm_s16le" || format.sample_rate !== 16_000) {
      this.violation(`audio_format ${JSON.stringify(format)}`);
      this.fail("invalid_audio_type", "Unsupported audio format", 4003);
      return;
    }
    if (typeof config?.language !== "string" || config.enable_partials !== true) {
      this.violation(`transcription_config ${JSON.stringify(config)}`);
      this.fail("invalid_config", "Invalid transcription config", 4003);
      return;
    }
    if (this.behaviour.overQuota) {
      this.fail("quota_exceeded", "Concurrent Quota Exceeded", 4005);
      return;
    }
    if (this.behaviour.silent) return;
    this.started = true;
    this.send({
      message: "RecognitionStarted",
      id: "rec-1",
      language_pack_info: { language_description: "x" },
    });
  }
}

export function transcript(text: string, final: boolean) {
  return {
    message: final ? "AddTranscript" : "AddPartialTranscript",
    format: "2.9",
    metadata: { start_time: 0.5, end_time: 1.2, transcript: text },
    results: [],
  };
}
