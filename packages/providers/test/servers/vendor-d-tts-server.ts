import type { IncomingHttpHeaders } from "node:http";
import { type Connection, type PeerOptions, TtsPeer } from "./tts-peer.js";

/**
 * A protocol peer for vendorD's TTS WebSocket. Checks the api_key and version query parameters (a bad
 * key is refused at the upgrade with 401, like the vendor), and every generation request: model,
 * transcript, voice {mode: "id", id}, raw pcm_s16le 24 kHz output, one context_id across the
 * continuations, speed where the model takes it. When the context's last input (continue: false)
 * arrives it streams {type: "chunk"} frames, interleaved with frames a client must ignore (timestamps,
 * another context's chunk), then {type: "done"}. Bad requests get a {type: "error"} frame.
 */

export interface VendorDPeerOptions extends PeerOptions {
  versionParam?: string;
}

const MODELS = ["sonic-3.6", "sonic-3.5", "sonic-3", "sonic-2", "sonic-turbo"];
const ALLOWED_FIELDS = new Set([
  "model_id",
  "transcript",
  "voice",
  "output_format",
  "context_id",
  "continue",
  "language",
  "generation_config",
  "add_timestamps",
]);

export class VendorDTtsServer extends TtsPeer {
  private readonly contexts = new WeakMap<Connection, { id: string | undefined; ended: boolean }>();

  constructor(protected override readonly options: VendorDPeerOptions) {
    super(options);
  }

  protected checkUpgrade(url: URL, _headers: IncomingHttpHeaders) {
    if (url.pathname !== "/tts/websocket") return { status: 404, body: '{"error_code":"not_found"}' };
    if (url.searchParams.get("api_key") !== this.options.apiKey) {
      return {
        status: 401,
        body: '{"error_code":"invalid_api_key","title":"Unauthorized","message":"Invalid API key","request_id":"r"}',
      };
    }
    if (
      !/^\d{4}-\d{2}-\d{2}$/.test(url.searchParams.get(this.options.versionParam ?? "vendorD_version") ?? "")
    ) {
      return {
        status: 400,
        body: '{"error_code":"invalid_version","title":"Bad Request","message":"Missing API version"}',
      };
    }
    return undefined;
  }

  protected override onOpen(connection: Connection): void {
    this.contexts.set(connection, { id: undefined, ended: false });
  }

  protected answerViolation(connection: Connection, what: string): void {
    const context = this.contexts.get(connection);
    connection.socket.send(
      JSON.stringify({
        type: "error",
        done: true,
        status_code: 400,
        error_code: "invalid_request",
        title: "Invalid request",
        message: what,
        request_id: "r",
        context_id: context?.id,
      }),
    );
  }

  protected onFrame(connection: Connection, data: Buffer, isBinary: boolean): void {
    const context = this.contexts.get(connection);
    if (!context) return;
    if (isBinary) {
      this.violation(connection, "binary frame");
      return;
    }
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(data.toString("utf8"));
    } catch {
      this.violation(connection, "frame is not JSON");
      return;
    }
    connection.messages.push(message);
    const problem = this.check(message, context);
    if (problem) {
      this.violation(connection, problem);
      return;
    }
    context.id = message.context_id as string;
    if (message.continue !== true) {
      context.ended = true;
      void this.finish(connection, context.id);
    }
  }

  private check(
    message: Record<string, unknown>,
    context: { id: string | undefined; ended: boolean },
  ): string | undefined {
    for (const key of Object.keys(message)) if (!ALLOWED_FIELDS.has(key)) return `unknown field ${key}`;
    if (context.ended) return "input after the context's last input";
    if (typeof message.model_id !== "string" || !MODELS.includes(message.model_id)) return "invalid model_id";
    if (typeof message.transcript !== "string") return "transcript must be a string";
    if (typeof message.context_id !== "string" || !message.context_id) return "context_id must be a string";
    if (context.id !== undefined && message.context_id !== context.id)
      return "context_id changed within a generation";
    if (message.continue !== undefined && typeof message.continue !== "boolean")
      return "continue must be a boolean";
    if (message.language !== undefined && !/^[a-z]{2}$/.test(String(message.language)))
      return "invalid language";
    const voice = message.voice as Record<string, unknown> | undefined;
    if (voice?.mode !== "id" || typeof voice.id !== "string" || !voice.id)
      return "voice must be {mode: id, id}";
    const format = message.output_format as Record<string, unknown> | undefined;
    if (format?.container !== "raw" || format.encoding !== "pcm_s16le" || format.sample_rate !== 24000) {
      return "output_format must be raw pcm_s16le at 24000 Hz";
    }
    const config = message.generation_config as Record<string, unknown> | undefined;
    if (config !== undefined) {
      if (!message.model_id.startsWith("sonic-3")) return "generation_config is for the sonic-3 family";
      if (typeof config.speed !== "number" || config.speed < 0.6 || config.speed > 1.5)
        return "speed must be 0.6..1.5";
    }
    const controls = voice.__experimental_controls as Record<string, unknown> | undefined;
    if (controls !== undefined && (typeof controls.speed !== "number" || Math.abs(controls.speed) > 1)) {
      return "experimental speed must be -1..1";
    }
    return undefined;
  }

  private async finish(connection: Connection, contextId: string): Promise<void> {
    const { socket } = connection;
    let sent = 0;
    const complete = await this.streamAudio(connection, (chunk) => {
      socket.send(
        JSON.stringify({
          type: "chunk",
          data: Buffer.from(chunk).toString("base64"),
          done: false,
          status_code: 206,
          step_time: 12,
          context_id: contextId,
        }),
      );
      if (sent++ === 0) {
        // Frames a client must pass over: timestamps, and a chunk of somebody else's context.
        socket.send(
          JSON.stringify({
            type: "timestamps",
            done: false,
            status_code: 206,
            context_id: contextId,
            word_timestamps: { words: ["x"], start: [0], end: [0.1] },
          }),
        );
        socket.send(
          JSON.stringify({
            type: "chunk",
            data: "AAAA",
            done: false,
            status_code: 206,
            context_id: "another-context",
          }),
        );
      }
    });
    if (complete)
      socket.send(JSON.stringify({ type: "done", done: true, status_code: 206, context_id: contextId }));
  }
}
