/**
 * A local peer for sttvendor2's universal-streaming v3 WebSocket. The handshake checks the query
 * (sample_rate, encoding, format_turns, a speech_model) and answers 400 otherwise. Like the vendor,
 * the key is checked after the upgrade: a wrong one gets an Error message and a 1008 close. A session
 * opens with Begin; each binary frame must hold 50 to 1000 ms of audio (else Error 3007 and a close);
 * an unknown message gets Error 3006. Terminate is answered with the turns still in flight, Termination
 * and a 1000 close.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { WsTestServer } from "./realtime-peer-transport.js";
import { SttPeer } from "./stt-peer.js";

const BYTES_PER_MS = 32;

export async function startSttVendor2Server(apiKey: string): Promise<WsTestServer<SttVendor2Peer>> {
  return WsTestServer.start<SttVendor2Peer>(
    "/v3/ws",
    (_req, url) => {
      const expected = { sample_rate: "16000", encoding: "pcm_s16le", format_turns: "true" };
      for (const [name, value] of Object.entries(expected)) {
        if (url.searchParams.get(name) !== value)
          return { status: 400, body: { error: `${name} must be ${value}` } };
      }
      if (!url.searchParams.get("speech_model"))
        return { status: 400, body: { error: "speech_model is required" } };
      return undefined;
    },
    (ws, req, url) => new SttVendor2Peer(ws, req, url, req.headers.authorization === apiKey),
  );
}

export class SttVendor2Peer extends SttPeer {
  /** Turns the server still has when Terminate arrives. */
  readonly flushOnTerminate: Record<string, unknown>[] = [];

  constructor(ws: WebSocket, req: IncomingMessage, url: URL, keyValid: boolean) {
    super(ws, req, url);
    if (!keyValid) {
      this.fail(1008, "Unauthorized Connection: Invalid API key");
      return;
    }
    if (url.searchParams.get("speech_model") === "busy-model") {
      this.fail(3009, "Unauthorized Connection: Too many concurrent sessions");
      return;
    }
    // A model name the tests use for a server that never confirms the session.
    if (url.searchParams.get("speech_model") !== "silent-model") {
      this.send({ type: "Begin", id: "session-1", expires_at: 1_900_000_000 });
    }
  }

  get audio(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.binaryFrames));
  }

  sendTurn(order: number, transcript: string, endOfTurn = false, formatted = false): void {
    this.send(turn(order, transcript, endOfTurn, formatted));
  }

  /** Ends the session the way the vendor reports errors: an Error message, then a close with its code. */
  fail(code: number, error: string): void {
    this.send({ type: "Error", error_code: code, error });
    this.closeWith(code, error.length > 120 ? "See Error message for details" : error);
  }

  protected onBinary(bytes: Uint8Array): void {
    const ms = bytes.length / BYTES_PER_MS;
    if (ms < 50 || ms > 1000) {
      this.violation(`audio frame of ${ms} ms`);
      this.fail(3007, `Input duration violation: ${ms} ms. Expected between 50 and 1000 ms`);
    }
  }

  protected onJson(message: Record<string, unknown>): void {
    if (message.type === "Terminate") {
      for (const pending of this.flushOnTerminate) this.send(pending);
      const seconds = this.audio.length / (BYTES_PER_MS * 1000);
      this.send({
        type: "Termination",
        audio_duration_seconds: seconds,
        session_duration_seconds: seconds + 1,
      });
      this.closeWith(1000);
      return;
    }
    this.violation(`unknown message ${JSON.stringify(message)}`);
    this.fail(3006, `Invalid Message Type: ${String(message.type)}`);
  }
}

export function turn(order: number, transcript: string, endOfTurn = false, formatted = false) {
  return {
    type: "Turn",
    turn_order: order,
    turn_is_formatted: formatted,
    end_of_turn: endOfTurn,
    transcript,
    end_of_turn_confidence: endOfTurn ? 0.9 : 0.01,
    words: [],
    utterance: "",
  };
}
