import type { IncomingHttpHeaders } from "node:http";
import { type Connection, type PeerOptions, TtsPeer } from "./tts-peer.js";

/**
 * A protocol peer for vendorA's stream-input WebSocket. Checks the path and query, the key (the
 * `xi-api-key` header or the first message), the opening message (text " " with voice_settings), the
 * text chunks (each ending in a space) and the closing {text: ""}. Answers like the vendor: base64
 * audio frames, then {isFinal: true} and a 1000 close; problems as {message, error, code} and a 1008
 * close.
 */

export interface VendorAPeerOptions extends PeerOptions {
  /** A bad key is answered by an error message and 1008 close (default) or by refusing the upgrade. */
  authFailure?: "close" | "refuse";
}

const VOICE_SETTING_TYPES: Record<string, "number" | "boolean"> = {
  stability: "number",
  similarity_boost: "number",
  style: "number",
  use_speaker_boost: "boolean",
  speed: "number",
};

export class VendorATtsServer extends TtsPeer {
  private readonly state = new WeakMap<Connection, { opened: boolean; ended: boolean; keyOk: boolean }>();

  constructor(protected override readonly options: VendorAPeerOptions) {
    super(options);
  }

  protected checkUpgrade(url: URL, headers: IncomingHttpHeaders) {
    if (!/^\/v1\/text-to-speech\/[^/]+\/stream-input$/.test(url.pathname))
      return { status: 404, body: '{"detail":"Not Found"}' };
    if (!url.searchParams.get("model_id")) return { status: 400, body: '{"detail":"model_id is required"}' };
    if (url.searchParams.get("output_format") !== "pcm_24000")
      return { status: 400, body: '{"detail":"unexpected output_format"}' };
    const key = headers["xi-api-key"];
    if (key !== undefined && key !== this.options.apiKey && this.options.authFailure === "refuse") {
      return { status: 401, body: '{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}' };
    }
    return undefined;
  }

  protected override onOpen(connection: Connection): void {
    this.state.set(connection, {
      opened: false,
      ended: false,
      keyOk: connection.headers["xi-api-key"] === this.options.apiKey,
    });
  }

  protected answerViolation(connection: Connection, what: string): void {
    connection.socket.send(JSON.stringify({ message: what, error: "invalid_request", code: 1008 }));
    connection.socket.close(1008, what.slice(0, 120));
  }

  protected onFrame(connection: Connection, data: Buffer, isBinary: boolean): void {
    const state = this.state.get(connection);
    if (!state) return;
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
    if (state.ended) {
      this.violation(connection, "message after the end of input");
      return;
    }

    if (!state.opened) {
      state.opened = true;
      const inMessageKey = message["xi-api-key"] ?? message.xi_api_key;
      if (inMessageKey !== undefined) state.keyOk = inMessageKey === this.options.apiKey;
      if (!state.keyOk) {
        connection.socket.send(
          JSON.stringify({ message: "Invalid API key", error: "invalid_api_key", code: 1008 }),
        );
        connection.socket.close(1008, "Invalid API key");
        return;
      }
      if (message.text !== " ") {
        this.violation(connection, "the first message must have text ' '");
        return;
      }
      this.checkVoiceSettings(connection, message.voice_settings);
      return;
    }

    if (typeof message.text !== "string") {
      this.violation(connection, "text must be a string");
      return;
    }
    for (const key of Object.keys(message)) {
      if (!["text", "try_trigger_generation", "flush"].includes(key)) {
        this.violation(connection, `unexpected field ${key}`);
        return;
      }
    }
    if (message.text === "") {
      state.ended = true;
      void this.finish(connection);
      return;
    }
    if (!message.text.endsWith(" ")) this.violations.push("text chunk does not end with a space");
  }

  private checkVoiceSettings(connection: Connection, settings: unknown): void {
    if (settings === undefined) return;
    if (typeof settings !== "object" || settings === null) {
      this.violation(connection, "voice_settings must be an object");
      return;
    }
    const fields = settings as Record<string, unknown>;
    for (const [key, value] of Object.entries(fields)) {
      const type = VOICE_SETTING_TYPES[key];
      if (!type) {
        this.violation(connection, `unknown voice setting ${key}`);
        return;
      }
      if (typeof value !== type) {
        this.violation(connection, `voice setting ${key} must be a ${type}`);
        return;
      }
      if (type === "number" && key !== "speed" && ((value as number) < 0 || (value as number) > 1)) {
        this.violation(connection, `voice setting ${key} out of range`);
        return;
      }
    }
    if (typeof fields.stability !== "number") this.violation(connection, "stability is required");
  }

  private async finish(connection: Connection): Promise<void> {
    const complete = await this.streamAudio(connection, (chunk) =>
      connection.socket.send(
        JSON.stringify({
          audio: Buffer.from(chunk).toString("base64"),
          isFinal: null,
          normalizedAlignment: null,
          alignment: null,
        }),
      ),
    );
    if (!complete) return;
    connection.socket.send(JSON.stringify({ audio: null, isFinal: true }));
    connection.socket.close(1000);
  }
}
