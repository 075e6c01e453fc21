import WebSocket from "ws";
import { postJson } from "../gateway-post.js";
import type { RoundTrips } from "./round-trips.js";

const CHUNK_MS = 1_000;
/** Every this many chunks the utterance ends (its last chunk goes with agent.speak_end). */
export const CHUNKS_PER_UTTERANCE = 5;

/** One second of 24 kHz 16-bit mono PCM (a quiet tone), base64: what every chunk carries. */
export const SECOND_OF_AUDIO = (() => {
  const pcm = Buffer.alloc(24_000 * 2);
  for (let i = 0; i < 24_000; i++)
    pcm.writeInt16LE(Math.round(1000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)), i * 2);
  return pcm.toString("base64");
})();

/** Where a session's socket comes from: the gateway (mint, start, ws_url) or the bare-ws floor. */
export interface SessionSource {
  /** The URL to connect to, and what to do when the session is done. */
  open(): Promise<{ wsUrl: string; close(): Promise<void> }>;
}

/** A LITE session through the public gateway: minted with the API key and started with its token. */
export function gatewaySession(gatewayUrl: string, apiKey: string, avatarId: string): SessionSource {
  return {
    open: async () => {
      const minted = await postJson(
        `${gatewayUrl}/v1/sessions/token`,
        { "X-API-KEY": apiKey },
        { avatar_id: avatarId, mode: "LITE" },
      );
      const bearer = { Authorization: `Bearer ${minted.session_token ?? ""}` };
      const started = await postJson(`${gatewayUrl}/v1/sessions/start`, bearer, {});
      return {
        wsUrl: started.ws_url ?? "",
        close: () => postJson(`${gatewayUrl}/v1/sessions/stop`, bearer, {}).then(() => {}),
      };
    },
  };
}

/** A socket straight to the floor server. */
export function floorSession(floorUrl: string): SessionSource {
  return { open: async () => ({ wsUrl: floorUrl, close: async () => {} }) };
}

/**
 * A LITE client: connects (as client `ip`, through a trusted proxy), then streams one second of audio
 * every second in real time and times each chunk's acknowledgement.
 */
export class StreamingSession {
  private ws: WebSocket | undefined;
  private close: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private n = 0;

  constructor(
    private readonly source: SessionSource,
    private readonly ip: string,
    private readonly trips: RoundTrips,
    private readonly id: number,
    /**
     * How many chunks of its first utterance the session counts as sent already (0 to
     * CHUNKS_PER_UTTERANCE - 1): sessions that all start at 0 end their utterances in the same second.
     */
    utterancePhase = 0,
  ) {
    this.n = utterancePhase;
  }

  async open(): Promise<void> {
    const { wsUrl, close } = await this.source.open();
    this.close = close;
    const ws = new WebSocket(wsUrl, { headers: { "X-Forwarded-For": this.ip } });
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      ws.once("message", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`ws ${res.statusCode}`)));
    });
    ws.on("message", (data) => this.onMessage(data.toString()));
    ws.on("close", () => {
      this.trips.closed++;
      this.pause();
    });
  }

  /** Starts streaming, at a random offset within the second so that sessions do not send in step. */
  stream(): void {
    this.pause();
    this.timer = setTimeout(() => {
      this.sendChunk();
      this.timer = setInterval(() => this.sendChunk(), CHUNK_MS);
    }, Math.random() * CHUNK_MS);
  }

  /** Stops streaming; the socket stays open. */
  pause(): void {
    // Node's clearTimeout clears an interval as well.
    clearTimeout(this.timer);
  }

  async stop(): Promise<void> {
    this.pause();
    this.ws?.removeAllListeners("close");
    await this.close?.().catch(() => {});
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
