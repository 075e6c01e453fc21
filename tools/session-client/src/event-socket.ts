import WebSocket from "ws";

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON from the server
export type ReceivedEvent = Record<string, any> & { type: string; atMs: number };

/** The event WebSocket as a browser uses it: connect to the ws_url of a start, send JSON, await events. */
export class EventSocket {
  readonly events: ReceivedEvent[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private taken = 0;
  private wake: (() => void) | undefined;

  private constructor(
    private readonly ws: WebSocket,
    t0: number,
    onEvent: (event: ReceivedEvent) => void,
  ) {
    ws.on("message", (data) => {
      const event = JSON.parse(data.toString()) as ReceivedEvent;
      event.atMs = Math.round(performance.now() - t0);
      this.events.push(event);
      onEvent(event);
      this.wake?.();
    });
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake?.();
      }),
    );
  }

  static open(url: string, t0: number, onEvent: (event: ReceivedEvent) => void): Promise<EventSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const socket = new EventSocket(ws, t0, onEvent);
      ws.once("open", () => resolve(socket));
      ws.once("unexpected-response", (_req, res) =>
        reject(new Error(`handshake refused: HTTP ${res.statusCode}`)),
      );
      ws.once("error", reject);
    });
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(event));
  }

  /** The next event of `type` (after the last one taken) that matches `where`. */
  async next(
    type: string,
    where: (e: ReceivedEvent) => boolean = () => true,
    timeoutMs = 30_000,
  ): Promise<ReceivedEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.events.findIndex((e, i) => i >= this.taken && e.type === type && where(e));
      if (index >= 0) {
        this.taken = index + 1;
        return this.events[index] as ReceivedEvent;
      }
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`socket closed before ${type}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.ws.close(1000);
  }
}
