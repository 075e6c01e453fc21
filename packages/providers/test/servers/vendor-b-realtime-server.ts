/**
 * A local peer for vendorB's realtime WebSocket protocol, for tests. It checks the handshake (Bearer key,
 * known model), checks every client event against the protocol (known type, session shape, strict base64
 * whole-sample audio, cancel only while a response runs, truncation inside the item's audio) and answers
 * a violation with an `error` event as the vendor does. It runs server-side voice detection on the audio
 * it receives (loudness per chunk, silence measured in audio time, never wall-clock), transcribes a user
 * turn as `heard`, and plays response scripts that can hold mid-answer until cancelled or interrupted.
 */
import type { WebSocket } from "ws";
import { isBase64, rms } from "./realtime-audio-fixtures.js";
import { Inbox, WsTestServer } from "./realtime-peer-transport.js";

export const VENDOR_B_MODELS = [
  "gpt-realtime",
  "gpt-realtime-mini",
  "gpt-realtime-2.1",
  "gpt-realtime-2.1-mini",
  "gpt-live-1",
];
const REALTIME_VOICES = [
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "fable",
  "onyx",
  "nova",
  "shimmer",
  "sage",
  "verse",
  "marin",
  "cedar",
];
const FULL_DUPLEX_VOICES = ["aster", "beacon", "cinder", "marin", "stone", "vesper"];
const SESSION_FIELDS = [
  "type",
  "audio",
  "instructions",
  "output_modalities",
  "temperature",
  "tools",
  "tool_choice",
  "max_output_tokens",
  "tracing",
  "truncation",
  "include",
  "prompt",
];
const CLIENT_EVENTS = [
  "session.update",
  "input_audio_buffer.append",
  "input_audio_buffer.commit",
  "input_audio_buffer.clear",
  "conversation.item.create",
  "conversation.item.truncate",
  "conversation.item.delete",
  "response.create",
  "response.cancel",
];
const SPEECH_RMS = 500;
const BYTES_PER_MS = 48;

export interface ClientEvent {
  type: string;
  [field: string]: unknown;
}

export interface ResponseScript {
  audio: Uint8Array[];
  transcript: string[];
  /** After this many chunks, wait until cancelled, interrupted or `release()`d. */
  holdAfter?: number;
  /** Legacy event names (response.audio.delta, response.audio_transcript.*). */
  legacyNames?: boolean;
  /** On cancel, one more chunk already on its way goes out before response.done (as on a real link). */
  lateChunkOnCancel?: boolean;
  /** End with status failed and this error instead of answering. */
  fail?: { type: string; code: string; message: string };
}

interface Running {
  id: string;
  itemId: string;
  cancelled: boolean;
  release: () => void;
  /** Sends the chunk in flight when the response is cancelled, if the script has one. */
  late?: () => void;
}

export class VendorBRealtimeServer {
  private constructor(readonly transport: WsTestServer<VendorBPeer>) {}

  static async start(apiKey: string): Promise<VendorBRealtimeServer> {
    const transport = await WsTestServer.start<VendorBPeer>(
      "/v1/realtime",
      (req, url) => {
        if (req.headers.authorization !== `Bearer ${apiKey}`) {
          return {
            status: 401,
            body: {
              error: {
                message: "Incorrect API key provided.",
                type: "invalid_request_error",
                code: "invalid_api_key",
              },
            },
          };
        }
        if (!url.searchParams.get("model")) {
          return {
            status: 400,
            body: {
              error: {
                message: "Missing required parameter: 'model'.",
                type: "invalid_request_error",
                code: "missing_required_parameter",
              },
            },
          };
        }
        return undefined;
      },
      (ws, _req, url) => new VendorBPeer(ws, url.searchParams.get("model") ?? ""),
    );
    return new VendorBRealtimeServer(transport);
  }

  get url(): string {
    return this.transport.url;
  }
}

export class VendorBPeer {
  readonly received = new Inbox<ClientEvent>();
  readonly violations: string[] = [];
  readonly closed: Promise<{ code: number }>;
  /** What the peer's recognizer hears in the next user turn. */
  heard = "what is the weather";
  /** Scripts for the coming responses; when empty, a short default answer. */
  readonly responses: ResponseScript[] = [];
  /** Holds session.updated back until released (to test a slow or aborted setup). */
  holdSetup = false;
  session: Record<string, unknown>;
  readonly appended: Uint8Array[] = [];
  private running: Running | undefined;
  private readonly items = new Map<string, { role: string; audioMs: number }>();
  private sequence = 0;
  private audioMs = 0;
  private speech: { itemId: string; quietMs: number } | undefined;
  private releaseSetup: (() => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    readonly model: string,
  ) {
    this.closed = new Promise((resolve) => ws.on("close", (code) => resolve({ code })));
    const family = model.startsWith("gpt-live") ? "full-duplex" : "realtime";
    this.session = {
      type: "realtime",
      object: "realtime.session",
      id: `sess_${Math.random().toString(36).slice(2)}`,
      model,
      output_modalities: ["audio"],
      instructions: "",
      audio: {
        input: {
          format: { type: "audio/pcm", rate: 24_000 },
          transcription: null,
          turn_detection: { type: "server_vad", silence_duration_ms: 500 },
        },
        output: {
          format: { type: "audio/pcm", rate: 24_000 },
          voice: family === "full-duplex" ? "marin" : "alloy",
        },
      },
    };
    if (!VENDOR_B_MODELS.includes(model)) {
      this.send({
        type: "error",
        error: {
          type: "invalid_request_error",
          code: "model_not_found",
          message: `The model '${model}' does not exist.`,
        },
      });
      ws.close(1008, "model_not_found");
      return;
    }
    ws.on("message", (data, isBinary) => void this.receive(data.toString(), isBinary));
    this.send({ type: "session.created", session: this.session });
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ event_id: `event_${++this.sequence}`, ...event }));
  }

  sendText(text: string): void {
    this.ws.send(text);
  }

  /** Drops the connection without a close frame. */
  drop(): void {
    this.ws.terminate();
  }

  /** Lets a held response continue. */
  release(): void {
    this.running?.release();
  }

  completeSetup(): void {
    this.releaseSetup?.();
  }

  get activeResponse(): string | undefined {
    return this.running?.id;
  }

  private async receive(text: string, isBinary: boolean): Promise<void> {
    let event: ClientEvent;
    try {
      event = JSON.parse(text) as ClientEvent;
    } catch {
      this.reject("invalid_json", "The event could not be parsed as JSON.");
      return;
    }
    if (isBinary) this.violations.push("binary frame");
    this.received.push(event);
    if (!CLIENT_EVENTS.includes(event.type)) {
      this.reject("invalid_value", `Invalid value: '${event.type}'.`, "type");
      return;
    }
    switch (event.type) {
      case "session.update":
        void this.onSessionUpdate(event);
        return;
      case "input_audio_buffer.append":
        this.onAppend(event);
        return;
      case "conversation.item.create":
        this.onItemCreate(event);
        return;
      case "response.create":
        if (this.running) {
          this.reject(
            "conversation_already_has_active_response",
            "Conversation already has an active response in progress.",
          );
          return;
        }
        void this.respond();
        return;
      case "response.cancel":
        if (!this.running) {
          this.reject("response_cancel_not_active", "Cancellation failed: no active response found.");
          return;
        }
        this.cancel();
        return;
      case "conversation.item.truncate":
        this.onTruncate(event);
        return;
      default:
        return;
    }
  }

  private async onSessionUpdate(event: ClientEvent): Promise<void> {
    const session = event.session as Record<string, unknown> | undefined;
    if (typeof session !== "object" || session === null) {
      this.reject("missing_required_parameter", "Missing required parameter: 'session'.");
      return;
    }
    if (session.type !== "realtime") {
      this.reject(
        "missing_required_parameter",
        "Missing required parameter: 'session.type'.",
        "session.type",
      );
      return;
    }
    for (const field of Object.keys(session)) {
      if (!SESSION_FIELDS.includes(field)) {
        this.reject("unknown_parameter", `Unknown parameter: 'session.${field}'.`, `session.${field}`);
        return;
      }
    }
    const fullDuplex = this.model.startsWith("gpt-live");
    if ("temperature" in session) {
      const t = session.temperature;
      if (fullDuplex) {
        this.reject("unknown_parameter", "Unknown parameter: 'session.temperature'.", "session.temperature");
        return;
      }
      if (typeof t !== "number" || t < 0.6 || t > 1.2) {
        this.reject("decimal_out_of_range", "Invalid 'session.temperature'.", "session.temperature");
        return;
      }
    }
    const audio = (session.audio ?? {}) as {
      input?: Record<string, unknown>;
      output?: Record<string, unknown>;
    };
    for (const [side, config] of [
      ["input", audio.input],
      ["output", audio.output],
    ] as const) {
      const format = config?.format as { type?: unknown; rate?: unknown } | undefined;
      if (format && !(format.type === "audio/pcm" && format.rate === 24_000)) {
        this.reject(
          "invalid_value",
          `Invalid 'session.audio.${side}.format'.`,
          `session.audio.${side}.format`,
        );
        return;
      }
    }
    const voice = audio.output?.voice;
    if (voice !== undefined && !(fullDuplex ? FULL_DUPLEX_VOICES : REALTIME_VOICES).includes(String(voice))) {
      this.reject("invalid_value", `Invalid value: '${String(voice)}'.`, "session.audio.output.voice");
      return;
    }
    const detection = audio.input?.turn_detection as { type?: unknown } | null | undefined;
    if (detection && !["server_vad", "semantic_vad"].includes(String(detection.type))) {
      this.reject("invalid_value", "Invalid 'session.audio.input.turn_detection.type'.");
      return;
    }
    this.session = merge(this.session, session);
    if (this.holdSetup) await new Promise<void>((resolve) => (this.releaseSetup = resolve));
    this.send({ type: "session.updated", session: this.session });
  }

  private onAppend(event: ClientEvent): void {
    if (!isBase64(event.audio)) {
      this.reject("invalid_value", "Invalid 'audio'. Expected base64-encoded audio.", "audio");
      return;
    }
    const pcm = Buffer.from(event.audio, "base64");
    if (pcm.length % 2 !== 0) {
      this.reject("invalid_value", "Audio must be 16-bit PCM: got an odd number of bytes.", "audio");
      return;
    }
    this.appended.push(new Uint8Array(pcm));
    const chunkMs = pcm.length / BYTES_PER_MS;
    this.audioMs += chunkMs;
    const input = (
      this.session.audio as { input: { turn_detection?: { silence_duration_ms?: number } | null } }
    ).input;
    if (!input.turn_detection) return;
    const loud = rms(pcm) > SPEECH_RMS;
    if (loud && !this.speech) {
      this.speech = { itemId: this.nextId("item"), quietMs: 0 };
      this.send({
        type: "input_audio_buffer.speech_started",
        audio_start_ms: Math.round(this.audioMs - chunkMs),
        item_id: this.speech.itemId,
      });
      // interrupt_response: a user who starts talking stops the answer in progress.
      if (this.running) this.cancel("turn_detected");
    } else if (this.speech) {
      this.speech.quietMs = loud ? 0 : this.speech.quietMs + chunkMs;
      if (this.speech.quietMs >= (input.turn_detection.silence_duration_ms ?? 500))
        void this.endUserTurn(this.speech.itemId);
    }
  }

  private async endUserTurn(itemId: string): Promise<void> {
    this.speech = undefined;
    this.send({
      type: "input_audio_buffer.speech_stopped",
      audio_end_ms: Math.round(this.audioMs),
      item_id: itemId,
    });
    this.send({ type: "input_audio_buffer.committed", previous_item_id: null, item_id: itemId });
    this.items.set(itemId, { role: "user", audioMs: 0 });
    this.send({
      type: "conversation.item.added",
      item: {
        id: itemId,
        type: "message",
        role: "user",
        content: [{ type: "input_audio", transcript: null }],
      },
    });
    const words = this.heard.split(/(?<= )/);
    for (const delta of words)
      this.send({
        type: "conversation.item.input_audio_transcription.delta",
        item_id: itemId,
        content_index: 0,
        delta,
      });
    this.send({
      type: "conversation.item.input_audio_transcription.completed",
      item_id: itemId,
      content_index: 0,
      transcript: this.heard,
    });
    if (!this.running) await this.respond();
  }

  private onItemCreate(event: ClientEvent): void {
    const item = event.item as
      | { type?: unknown; role?: unknown; content?: { type?: unknown; text?: unknown }[] }
      | undefined;
    const valid =
      item?.type === "message" &&
      ["user", "system", "assistant"].includes(String(item.role)) &&
      Array.isArray(item.content) &&
      item.content.every((part) => part.type === "input_text" && typeof part.text === "string");
    if (!valid) {
      this.reject("invalid_value", "Invalid 'item'.", "item");
      return;
    }
    const id = this.nextId("item");
    this.items.set(id, { role: String(item.role), audioMs: 0 });
    this.send({ type: "conversation.item.added", item: { id, ...item } });
    this.send({ type: "conversation.item.done", item: { id, ...item } });
  }

  private onTruncate(event: ClientEvent): void {
    const item = this.items.get(String(event.item_id));
    if (item?.role !== "assistant") {
      this.reject("invalid_value", `Item '${String(event.item_id)}' is not an assistant item.`, "item_id");
      return;
    }
    if (event.content_index !== 0) {
      this.reject("invalid_value", "Invalid 'content_index'.", "content_index");
      return;
    }
    const end = event.audio_end_ms;
    if (!Number.isInteger(end) || (end as number) < 0) {
      this.reject("invalid_value", "Invalid 'audio_end_ms'.", "audio_end_ms");
      return;
    }
    if ((end as number) > item.audioMs) {
      this.reject(
        "invalid_value",
        `Audio content of ${Math.round(item.audioMs)}ms is already shorter than ${String(end)}ms`,
        "audio_end_ms",
      );
      return;
    }
    item.audioMs = end as number;
    this.send({
      type: "conversation.item.truncated",
      item_id: event.item_id,
      content_index: 0,
      audio_end_ms: end,
    });
  }

  private async respond(): Promise<void> {
    const script = this.responses.shift() ?? { audio: [new Uint8Array(4_800)], transcript: ["Hi."] };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const run: Running = { id: this.nextId("resp"), itemId: this.nextId("item"), cancelled: false, release };
    this.running = run;
    const ids = { response_id: run.id, item_id: run.itemId, output_index: 0, content_index: 0 };
    const audioType = script.legacyNames ? "response.audio" : "response.output_audio";
    const textType = script.legacyNames ? "response.audio_transcript" : "response.output_audio_transcript";
    this.send({
      type: "response.created",
      response: { id: run.id, object: "realtime.response", status: "in_progress", output: [] },
    });
    if (script.fail) {
      this.finish(run, "failed", { type: "failed", error: script.fail });
      return;
    }
    this.items.set(run.itemId, { role: "assistant", audioMs: 0 });
    this.send({
      type: "response.output_item.added",
      response_id: run.id,
      output_index: 0,
      item: { id: run.itemId, type: "message", role: "assistant", status: "in_progress", content: [] },
    });
    this.send({ type: "response.content_part.added", ...ids, part: { type: "audio", transcript: "" } });
    for (let i = 0; i < script.audio.length; i++) {
      const text = script.transcript[i];
      if (text !== undefined) this.send({ type: `${textType}.delta`, ...ids, delta: text });
      const chunk = script.audio[i] as Uint8Array;
      this.send({ type: `${audioType}.delta`, ...ids, delta: Buffer.from(chunk).toString("base64") });
      (this.items.get(run.itemId) as { audioMs: number }).audioMs += chunk.length / BYTES_PER_MS;
      const next = script.audio[i + 1];
      if (script.lateChunkOnCancel && next) {
        run.late = () =>
          this.send({ type: `${audioType}.delta`, ...ids, delta: Buffer.from(next).toString("base64") });
      }
      if (script.holdAfter === i + 1) await held;
      if (run.cancelled) return;
    }
    const transcript = script.transcript.join("");
    this.send({ type: `${audioType}.done`, ...ids });
    this.send({ type: `${textType}.done`, ...ids, transcript });
    this.send({ type: "response.content_part.done", ...ids, part: { type: "audio", transcript } });
    this.send({
      type: "response.output_item.done",
      response_id: run.id,
      output_index: 0,
      item: { id: run.itemId, type: "message", role: "assistant", status: "completed" },
    });
    this.finish(run, "completed");
  }

  private cancel(reason = "client_cancelled"): void {
    const run = this.running;
    if (!run) return;
    run.cancelled = true;
    run.release();
    run.late?.();
    this.finish(run, "cancelled", { type: "cancelled", reason });
  }

  private finish(run: Running, status: string, details: Record<string, unknown> | null = null): void {
    this.running = undefined;
    this.send({
      type: "response.done",
      response: { id: run.id, object: "realtime.response", status, status_details: details, output: [] },
    });
  }

  private reject(code: string, message: string, param: string | null = null): void {
    this.violations.push(`${code}: ${message}`);
    this.send({
      type: "error",
      error: { type: "invalid_request_error", code, message, param, event_id: null },
    });
  }

  private nextId(prefix: string): string {
    return `${prefix}_${++this.sequence}`;
  }
}

function merge(base: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(update)) {
    const current = out[key];
    const nested = typeof value === "object" && value !== null && !Array.isArray(value);
    out[key] =
      nested && typeof current === "object" && current !== null
        ? merge(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}
