import WebSocket from "ws";

/** A server event as received, with the time it arrived (performance.now()). */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export type ServerEvent = Record<string, any> & { type: string; receivedAt: number };

/**
 * A client of the event WebSocket for tests: connects to a ws_url as a browser would (no headers),
 * keeps every event it receives, and waits for the ones a test expects.
 */
export class EventClient {
  readonly events: ServerEvent[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private cursor = 0;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      const event = JSON.parse(isBinary ? "{}" : data.toString()) as ServerEvent;
      event.receivedAt = performance.now();
      this.events.push(event);
      for (const wake of [...this.waiters]) wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on("close", (code, reason) => {
        resolve({ code, reason: reason.toString() });
        for (const wake of [...this.waiters]) wake();
      });
    });
  }

  /** Opens the socket; rejects with the HTTP status when the handshake is refused. */
  static connect(url: string): Promise<EventClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new EventClient(ws);
      ws.once("open", () => resolve(client));
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => reject(new HandshakeRefused(res.statusCode ?? 0, body)));
      });
      ws.once("error", (err) => reject(err));
    });
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(event));
  }

  sendText(text: string): void {
    this.ws.send(text);
  }

  /**
   * The next event (after those already taken) of `type` matching `where`; events skipped on the way
   * stay readable in `events`. Rejects after `timeoutMs`.
   */
  async next(
    type: string,
    where: (e: ServerEvent) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<ServerEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = this.cursor; i < this.events.length; i++) {
        const e = this.events[i] as ServerEvent;
        if (e.type === type && where(e)) {
          this.cursor = i + 1;
          return e;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `no ${type} within ${timeoutMs} ms; got ${this.events.map((e) => e.type).join(", ")}`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  /** Events received so far of `type`. */
  all(type: string): ServerEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close(1000);
    return this.closed;
  }
}

export class HandshakeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`handshake refused with ${status}: ${body}`);
  }
}

/** The HTTP status a refused handshake got (the test fails if the socket opens). */
export async function refusal(url: string): Promise<HandshakeRefused> {
  try {
    const client = await EventClient.connect(url);
    await client.close();
  } catch (err) {
    if (err instanceof HandshakeRefused) return err;
    throw err;
  }
  throw new Error("the handshake was accepted");
}

/** `ms` of 24 kHz mono 16-bit PCM (a quiet tone), base64. */
export function pcmBase64(ms: number): string {
  const samples = Math.round(ms * 24);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    pcm.writeInt16LE(Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)), i * 2);
  return pcm.toString("base64");
}
