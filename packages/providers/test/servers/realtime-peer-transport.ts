/**
 * The transport half of the realtime test peers: a node:http server that accepts WebSocket upgrades on
 * one path, refuses a handshake with an HTTP status and JSON body the way a vendor does (bad key, rate
 * limit), and hands each accepted socket to a protocol peer.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";

export interface Refusal {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export class WsTestServer<Peer> {
  private readonly refusals: Refusal[] = [];
  private readonly waiting: ((peer: Peer) => void)[] = [];
  private readonly accepted: Peer[] = [];
  readonly handshakes: IncomingMessage[] = [];

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
    readonly url: string,
  ) {}

  /** `check` answers a Refusal for a handshake the vendor would refuse (after queued refusals). */
  static async start<Peer>(
    path: string,
    check: (req: IncomingMessage, url: URL) => Refusal | undefined,
    createPeer: (ws: WebSocket, req: IncomingMessage, url: URL) => Peer,
  ): Promise<WsTestServer<Peer>> {
    const server = createServer((_req, res) => res.writeHead(426).end());
    const wss = new WebSocketServer({ noServer: true });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const test = new WsTestServer<Peer>(server, wss, `ws://127.0.0.1:${port}${path}`);
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      test.handshakes.push(req);
      const url = new URL(req.url ?? "/", "http://localhost");
      const refusal =
        test.refusals.shift() ??
        (url.pathname === path
          ? check(req, url)
          : { status: 404, body: { error: { message: "Not found" } } });
      if (refusal) return refuse(socket, refusal);
      wss.handleUpgrade(req, socket, head, (ws) => test.accept(createPeer(ws, req, url)));
    });
    return test;
  }

  /** The next handshake is refused with this status, whatever it carries. */
  refuseNext(refusal: Refusal): void {
    this.refusals.push(refusal);
  }

  /** The next accepted connection's peer (or one already accepted and not yet taken). */
  nextPeer(): Promise<Peer> {
    const ready = this.accepted.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(peer: Peer): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(peer);
    else this.accepted.push(peer);
  }
}

function refuse(socket: Duplex, refusal: Refusal): void {
  const body = JSON.stringify(refusal.body ?? { error: { message: `HTTP ${refusal.status}` } });
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    ...refusal.headers,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  socket.end(
    `HTTP/1.1 ${refusal.status} Refused\r\nconnection: close\r\n${lines.join("\r\n")}\r\n\r\n${body}`,
  );
}

/** Messages a peer received, in order, with a way to wait for one that has not arrived yet. */
export class Inbox<T> {
  readonly items: T[] = [];
  private readonly waiters: { match: (item: T) => boolean; from: number; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(item)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(item);
      }
    }
  }

  /** The first item matching, counting only from position `from` (default: from the start). */
  waitFor(match: (item: T) => boolean, from = 0): Promise<T> {
    const found = this.items.slice(from).find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, from, resolve }));
  }
}
