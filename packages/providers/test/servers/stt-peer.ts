/**
 * What every speech-recognition test peer shares: it records the client's frames in order (JSON text
 * or binary audio), notes protocol violations for the test to assert on, and sends, closes or drops
 * the socket the way the vendor does. Each vendor's peer adds its protocol on top.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { Inbox } from "./realtime-peer-transport.js";

export type ClientFrame =
  | { kind: "json"; message: Record<string, unknown> }
  | { kind: "text"; text: string }
  | { kind: "binary"; bytes: Uint8Array };

export abstract class SttPeer {
  readonly received = new Inbox<ClientFrame>();
  readonly violations: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(
    protected readonly ws: WebSocket,
    readonly request: IncomingMessage,
    readonly url: URL,
  ) {
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on("message", (data, isBinary) => {
      const bytes = new Uint8Array(Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]));
      if (isBinary) {
        this.received.push({ kind: "binary", bytes });
        this.onBinary(bytes);
        return;
      }
      const text = Buffer.from(bytes).toString("utf8");
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        message = undefined;
      }
      if (typeof message === "object" && message !== null && !Array.isArray(message)) {
        this.received.push({ kind: "json", message: message as Record<string, unknown> });
        this.onJson(message as Record<string, unknown>);
      } else {
        this.received.push({ kind: "text", text });
        this.violation(`not a JSON object: ${text.slice(0, 60)}`);
      }
    });
  }

  protected abstract onJson(message: Record<string, unknown>): void;
  protected abstract onBinary(bytes: Uint8Array): void;

  /** The JSON messages the client sent, in order. */
  get messages(): Record<string, unknown>[] {
    return this.received.items.flatMap((frame) => (frame.kind === "json" ? [frame.message] : []));
  }

  /** The binary frames the client sent, in order. */
  get binaryFrames(): Uint8Array[] {
    return this.received.items.flatMap((frame) => (frame.kind === "binary" ? [frame.bytes] : []));
  }

  send(message: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  closeWith(code: number, reason = ""): void {
    this.ws.close(code, reason);
  }

  /** Drops the TCP connection without a close frame. */
  drop(): void {
    this.ws.terminate();
  }

  protected violation(what: string): void {
    this.violations.push(what);
  }
}
