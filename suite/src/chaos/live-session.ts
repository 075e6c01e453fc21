import WebSocket from "ws";
import { apiKeyHeaders, bearer, type Cluster, call, WAYNE } from "./cluster.js";

// biome-ignore lint/suspicious/noExplicitAny: server events are arbitrary JSON
type ServerEvent = Record<string, any> & { type: string };

/** 20 ms of a quiet 24 kHz tone, base64: one small `agent.speak` chunk. */
const CHUNK = (() => {
  const samples = 480;
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(1000 * Math.sin(i / 10)), i * 2);
  return pcm.toString("base64");
})();

/**
 * A LITE session as a client runs it through the public API: minted and started through a gateway, its
 * event socket open, an `agent.speak` chunk sent at a steady pace; each is acknowledged by
 * `agent.audio_buffer_appended` with its event id. When its socket closes under it (its gateway died),
 * it starts the session again through another gateway (a new ticket) and sends the messages that were
 * not acknowledged again, as a client would.
 */
export class LiveSession {
  readonly events: ServerEvent[] = [];
  readonly sent = new Map<string, number>();
  readonly acknowledged = new Map<string, number>();
  /** Times the socket closed under the client. */
  drops = 0;
  private ws: WebSocket | undefined;
  private pump: NodeJS.Timeout | undefined;
  private n = 0;
  private gatewayIndex: number;

  private constructor(
    private readonly cluster: Cluster,
    readonly id: string,
    readonly token: string,
    gatewayIndex: number,
  ) {
    this.gatewayIndex = gatewayIndex;
  }

  /** Mints and starts a session (LITE unless `extra` says otherwise) and connects its socket. */
  static async open(
    cluster: Cluster,
    gatewayIndex: number,
    extra: Record<string, unknown> = {},
  ): Promise<LiveSession> {
    const gateway = cluster.gateways[gatewayIndex] as string;
    const minted = await call(gateway, "POST", "/v1/sessions/token", apiKeyHeaders(cluster), {
      avatar_id: WAYNE,
      mode: "LITE",
      ...extra,
    });
    if (minted.status !== 200) throw new Error(`mint failed: ${minted.status}`);
    const session = new LiveSession(
      cluster,
      minted.data?.session_id as string,
      minted.data?.session_token as string,
      gatewayIndex,
    );
    await session.connect();
    return session;
  }

  get gateway(): string {
    return this.cluster.gateways[this.gatewayIndex] as string;
  }

  get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Sends one chunk every `everyMs` until `stopStreaming`. */
  stream(everyMs: number): void {
    this.pump = setInterval(() => this.speak(), everyMs);
  }

  stopStreaming(): void {
    clearInterval(this.pump);
  }

  /** Sends any client event. */
  sendEvent(event: Record<string, unknown>): void {
    this.ws?.send(JSON.stringify(event));
  }

  /** Messages sent and not acknowledged (yet). */
  unacknowledged(): string[] {
    return [...this.sent.keys()].filter((id) => !this.acknowledged.has(id));
  }

  /** Waits until every message sent so far is acknowledged; answers those that are not by `timeoutMs`. */
  async settle(timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.unacknowledged().length > 0 && Date.now() < deadline) await sleep(50);
    return this.unacknowledged();
  }

  /** Waits for an event; undefined after `timeoutMs`. */
  async waitFor(match: (e: ServerEvent) => boolean, timeoutMs: number): Promise<ServerEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(match);
      if (found || Date.now() > deadline) return found;
      await sleep(20);
    }
  }

  /** The session as the sessions service has it. */
  async record() {
    const { session } = await this.cluster.clients.sessions.getSession({
      spaceId: this.cluster.spaceId,
      sessionId: this.id,
    });
    return session;
  }

  /** Stops the session through the public API and closes the socket. */
  async stop(): Promise<void> {
    this.stopStreaming();
    await call(this.gateway, "POST", "/v1/sessions/stop", bearer(this.token));
    this.ws?.close(1000);
  }

  /** Starts the session through another gateway (a fresh ticket) and connects to it there. */
  async reconnectElsewhere(): Promise<void> {
    this.gatewayIndex = (this.gatewayIndex + 1) % this.cluster.gateways.length;
    await this.connect();
    for (const id of this.unacknowledged()) this.send(id);
  }

  private async connect(): Promise<void> {
    const started = await call(this.gateway, "POST", "/v1/sessions/start", bearer(this.token));
    if (started.status !== 201) throw new Error(`start failed: ${started.status} ${started.message}`);
    const ws = new WebSocket(started.data?.ws_url as string);
    this.ws = ws;
    ws.on("message", (data) => {
      const event = JSON.parse(data.toString()) as ServerEvent;
      this.events.push(event);
      if (event.type === "agent.audio_buffer_appended" && event.source_event_id) {
        if (!this.acknowledged.has(event.source_event_id))
          this.acknowledged.set(event.source_event_id, Date.now());
      }
    });
    ws.on("close", (code) => {
      if (this.ws === ws && code !== 1000) this.drops++;
    });
    ws.on("error", () => {});
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const connected = await this.waitFor(
      (e) => e.type === "session.state_updated" && e.state === "connected",
      20_000,
    );
    if (!connected) throw new Error("the session never said connected");
  }

  private speak(): void {
    if (!this.open) return;
    const id = `m${++this.n}`;
    this.sent.set(id, Date.now());
    this.send(id);
  }

  private send(id: string): void {
    this.ws?.send(JSON.stringify({ type: "agent.speak", event_id: id, audio: CHUNK }));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
