import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type WebSocket, WebSocketServer } from "ws";

/**
 * What the speech-synthesis protocol peers share: an HTTP server on a free local port that accepts
 * (or refuses, like the vendor would) the WebSocket upgrade, records every connection and frame, and
 * streams a known waveform in chunks — with the ways a real service fails injected on request.
 */

export type Failure =
  /** The upgrade is refused with this HTTP status and body. */
  | { type: "refuse"; status: number; body?: string }
  /** After `afterChunks` audio chunks the server closes with this code. */
  | { type: "close"; afterChunks: number; code: number; reason?: string }
  /** After `afterChunks` audio chunks the TCP connection is cut without a close frame. */
  | { type: "abrupt"; afterChunks: number }
  /** After `afterChunks` audio chunks the server sends this raw frame (malformed or an error answer). */
  | {
      type: "frame";
      afterChunks: number;
      frame: string | Uint8Array;
      thenClose?: { code: number; reason?: string };
    };

export interface PeerOptions {
  apiKey: string;
  /** PCM streamed back for every synthesis. */
  audio: Uint8Array;
  /** Bytes per audio frame; odd sizes split samples across frames, as providers may. */
  chunkBytes: number;
  failure?: Failure;
  /** Stop after this many chunks until release() is called (or forever, for abort tests). */
  pauseAfterChunks?: number;
}

export interface Connection {
  url: URL;
  headers: IncomingHttpHeaders;
  /** Decoded client frames, in order. */
  messages: unknown[];
  socket: WebSocket;
  /** Resolves with the close code once the socket is closed, whoever closed it. */
  closed: Promise<number>;
}

export abstract class TtsPeer {
  readonly connections: Connection[] = [];
  /** Protocol violations seen in what clients sent; a correct client leaves this empty. */
  readonly violations: string[] = [];
  protected readonly wss = new WebSocketServer({ noServer: true });
  private server: Server | undefined;
  private releaseGate: (() => void) | undefined;
  private readonly gate: Promise<void>;

  constructor(protected readonly options: PeerOptions) {
    this.gate = new Promise((resolve) => {
      this.releaseGate = resolve;
    });
  }

  /** Decides the upgrade: undefined accepts, otherwise the HTTP status and body to answer with. */
  protected abstract checkUpgrade(
    url: URL,
    headers: IncomingHttpHeaders,
  ): { status: number; body: string } | undefined;
  /** Handles one client frame of an accepted connection. */
  protected abstract onFrame(connection: Connection, data: Buffer, isBinary: boolean): void;

  async start(): Promise<this> {
    this.server = createServer((_req, res) => res.writeHead(426).end());
    this.server.on("upgrade", (req, socket, head) => this.upgrade(req, socket, head));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return this;
  }

  get baseUrl(): string {
    if (!this.server) throw new Error("peer not started");
    const { port } = this.server.address() as AddressInfo;
    return `ws://127.0.0.1:${port}`;
  }

  release(): void {
    this.releaseGate?.();
  }

  async stop(): Promise<void> {
    this.release();
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  protected violation(connection: Connection, what: string): void {
    this.violations.push(what);
    this.answerViolation(connection, what);
  }

  /** How the vendor answers a request it cannot accept. */
  protected abstract answerViolation(connection: Connection, what: string): void;

  /**
   * Streams the configured audio through `send` (one vendor frame per chunk), applying the failure
   * and the pause; resolves true when every chunk went out and the stream may finish normally.
   */
  protected async streamAudio(connection: Connection, send: (chunk: Uint8Array) => void): Promise<boolean> {
    const { audio, chunkBytes, failure, pauseAfterChunks } = this.options;
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < audio.length; at += chunkBytes) chunks.push(audio.subarray(at, at + chunkBytes));
    for (let index = 0; index <= chunks.length; index++) {
      if (failure && failure.type !== "refuse" && failure.afterChunks === index) {
        this.fail(connection, failure);
        return false;
      }
      if (index === chunks.length) return true;
      if (index === pauseAfterChunks) await this.gate;
      if (connection.socket.readyState !== connection.socket.OPEN) return false;
      send(chunks[index] as Uint8Array);
      // Separate turns, so chunks travel as separate frames the client sees one by one.
      await nextTurn();
    }
    return true;
  }

  private fail(connection: Connection, failure: Exclude<Failure, { type: "refuse" }>): void {
    const { socket } = connection;
    if (failure.type === "close") socket.close(failure.code, failure.reason);
    else if (failure.type === "abrupt") socket.terminate();
    else {
      socket.send(failure.frame);
      if (failure.thenClose) socket.close(failure.thenClose.code, failure.thenClose.reason);
    }
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://peer");
    const failure = this.options.failure;
    const refusal =
      failure?.type === "refuse"
        ? { status: failure.status, body: failure.body ?? "" }
        : this.checkUpgrade(url, req.headers);
    if (refusal) {
      socket.end(
        `HTTP/1.1 ${refusal.status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(refusal.body)}\r\nConnection: close\r\n\r\n${refusal.body}`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection: Connection = {
        url,
        headers: req.headers,
        messages: [],
        socket: ws,
        closed: new Promise((resolve) => ws.on("close", (code) => resolve(code))),
      };
      this.connections.push(connection);
      ws.on("message", (data, isBinary) => this.onFrame(connection, data as Buffer, isBinary));
      this.onOpen(connection);
    });
  }

  /** Called when a connection opens (before any frame). */
  protected onOpen(_connection: Connection): void {}
}

/** A pseudo-random but reproducible waveform: any misplaced or lost byte changes the comparison. */
export function knownPcm(bytes: number, seed = 12345): Uint8Array {
  const pcm = new Uint8Array(bytes);
  let state = seed >>> 0;
  for (let i = 0; i < bytes; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    pcm[i] = state >>> 24;
  }
  return pcm;
}
