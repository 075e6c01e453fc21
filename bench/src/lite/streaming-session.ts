import WebSocket from "ws";
import type { KeyPool } from "../key-pool.js";
import type { RoundTrips } from "./round-trips.js";

const CHUNK_MS = 1_000;
/** Every this many chunks the utterance ends (its last chunk goes with agent.speak_end). */
const CHUNKS_PER_UTTERANCE = 5;

/** One second of 24 kHz 16-bit mono PCM (a quiet tone), base64: what every chunk carries. */
export const SECOND_OF_AUDIO = (() => {
  const pcm = Buffer.alloc(24_000 * 2);
  for (let i = 0; i < 24_000; i++)
    pcm.writeInt16LE(Math.round(1000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)), i * 2);
  return pcm.toString("base64");
})();

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const payload = (await res.json().catch(() => null)) as { data?: Record<string, string> } | null;
  if (res.status >= 300) throw new Error(`${new URL(url).pathname} ${res.status}`);
  return payload?.data ?? {};
}

/**
 * A LITE client: mints and starts a session through the gateway, connects to its ws_url (as client
 * `ip`, through a trusted proxy), then streams one second of audio every second in real time and
 * times each chunk's acknowledgement.
 */
export class StreamingSession {
  private ws: WebSocket | undefined;
  private token = "";
  private timer: NodeJS.Timeout | undefined;
  private n = 0;

  constructor(
    private readonly gatewayUrl: string,
    private readonly keys: KeyPool,
    private readonly avatarId: string,
    private readonly ip: string,
    private readonly trips: RoundTrips,
    private readonly id: number,
  ) {}

  async open(): Promise<void> {
    const minted = await post(
      `${this.gatewayUrl}/v1/sessions/token`,
      { "X-API-KEY": await this.keys.take() },
      { avatar_id: this.avatarId, mode: "LITE" },
    );
    this.token = minted.session_token ?? "";
    const started = await post(
      `${this.gatewayUrl}/v1/sessions/start`,
      { Authorization: `Bearer ${this.token}` },
      {},
    );
    const ws = new WebSocket(started.ws_url ?? "", { headers: { "X-Forwarded-For": this.ip } });
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      ws.once("message", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`ws ${res.statusCode}`)));
    });
    ws.on("message", (data) => this.onMessage(data.toString()));
    ws.on("close", () => {
      this.trips.closed++;
      clearInterval(this.timer);
    });
  }

  /** Starts streaming, at a random offset within the second so that sessions do not send in step. */
  stream(): void {
    setTimeout(() => {
      this.sendChunk();
      this.timer = setInterval(() => this.sendChunk(), CHUNK_MS);
    }, Math.random() * CHUNK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await post(`${this.gatewayUrl}/v1/sessions/stop`, { Authorization: `Bearer ${this.token}` }, {}).catch(
      () => {},
    );
    this.ws?.terminate();
  }

  private sendChunk(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== ws.OPEN) return;
    this.n++;
    const id = `${this.id}-${this.n}`;
    const type = this.n % CHUNKS_PER_UTTERANCE === 0 ? "agent.speak_end" : "agent.speak";
    this.trips.chunkSent(id);
    ws.send(`{"type":"${type}","event_id":"${id}","audio":"${SECOND_OF_AUDIO}"}`);
  }

  private onMessage(text: string): void {
    const event = JSON.parse(text) as { type: string; source_event_id: string | null };
    if (event.type === "agent.audio_buffer_appended" && event.source_event_id) {
      this.trips.acknowledged(event.source_event_id);
    } else if (event.type === "error") {
      this.trips.errors++;
    }
  }
}
