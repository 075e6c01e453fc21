/**
 * A local peer for sttvendor1's live transcription WebSocket. The handshake checks the
 * `Authorization: Token <key>` header (401 with the vendor's JSON error body otherwise) and the query
 * the client must send (400 otherwise). The peer collects the binary audio, counts KeepAlives, treats an
 * empty binary frame as a violation (the vendor reads it as the end of the stream), and answers
 * CloseStream like the vendor: the results still in flight, a Metadata message, a 1000 close.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

const REQUIRED_QUERY: Record<string, string> = {
  encoding: "linear16",
  sample_rate: "24000",
  channels: "1",
  interim_results: "true",
  punctuate: "true",
};

export async function startSttVendor1Server(apiKey: string): Promise<WsTestServer<SttVendor1Peer>> {
  return WsTestServer.start<SttVendor1Peer>(
    "/v1/listen",
    (req, url) => {
      if (req.headers.authorization !== `Token ${apiKey}`) {
        return {
          status: 401,
          headers: { "dg-error": "Invalid credentials." },
          body: { err_code: "INVALID_AUTH", err_msg: "Invalid credentials.", request_id: "req-1" },
        };
      }
      for (const [name, value] of Object.entries(REQUIRED_QUERY)) {
        if (url.searchParams.get(name) !== value) {
          return { status: 400, body: { err_code: "Bad Request", err_msg: `${name} must be ${value}` } };
        }
      }
      if (!url.searchParams.get("language")) {
        return { status: 400, body: { err_code: "Bad Request", err_msg: "language is required" } };
      }
      return undefined;
    },
    (ws, req, url) => new SttVendor1Peer(ws, req, url),
  );
}

export class SttVendor1Peer extends SttPeer {
  keepAlives = 0;
  /** Results the server still holds when CloseStream arrives: sent before Metadata. */
  readonly flushOnClose: Record<string, unknown>[] = [];
  /** When false the peer ignores CloseStream (a server that never finishes). */
  answersCloseStream = true;

  constructor(ws: WebSocket, req: IncomingMessage, url: URL) {
    super(ws, req, url);
  }

  get audio(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.binaryFrames));
  }

  /** A Results message as the vendor shapes it. */
  sendResults(transcript: string, flags: { isFinal?: boolean; speechFinal?: boolean } = {}): void {
    this.send(results(transcript, flags));
  }

  protected onBinary(bytes: Uint8Array): void {
    if (bytes.length === 0) this.violation("empty binary frame");
  }

  protected onJson(message: Record<string, unknown>): void {
    if (message.type === "KeepAlive") {
      this.keepAlives += 1;
      return;
    }
    if (message.type === "CloseStream") {
      if (!this.answersCloseStream) return;
      for (const pending of this.flushOnClose) this.send(pending);
      this.send({ type: "Metadata", request_id: "req-1", duration: 1.5, channels: 1 });
      this.closeWith(1000);
      return;
    }
    this.violation(`unknown message ${JSON.stringify(message)}`);
  }
}

export function results(transcript: string, flags: { isFinal?: boolean; speechFinal?: boolean } = {}) {
  return {
    type: "Results",
    channel_index: [0, 1],
    duration: 0.5,
    start: 0,
    is_final: flags.isFinal ?? false,
    speech_final: flags.speechFinal ?? false,
    channel: { alternatives: [{ transcript, confidence: 0.98, words: [] }] },
  };
}
