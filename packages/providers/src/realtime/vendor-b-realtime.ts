/**
 * vendorB's realtime models over its realtime WebSocket protocol: `{baseUrl}?model=...` with a Bearer
 * key; JSON events both ways. The client configures the session (`session.update`), streams the user's
 * audio (`input_audio_buffer.append`), lets the server detect turns, and maps the server's events to
 * ConversationEvents. Audio is PCM 16-bit 24 kHz in both directions, the session's own format.
 */
import { kindForErrorObject } from "../http-errors.js";
import {
  type Conversation,
  type ConversationOptions,
  type ConversationProvider,
  ProviderError,
} from "../types.js";
import { SocketConversation } from "./socket-conversation.js";
import {
  VENDOR_B_DEFAULT_MODEL,
  VENDOR_B_DEFAULT_TRANSCRIPTION_MODEL,
  vendorBSessionUpdate,
} from "./vendor-b-session.js";
import { connectWebSocket, fromBase64, toBase64 } from "./ws-connect.js";

export interface VendorBRealtimeOptions {
  /** The realtime endpoint, e.g. `wss://host/v1/realtime`; the model goes in the `model` query parameter. */
  baseUrl: string;
  name?: string;
  /** The model that transcribes the user's speech. */
  transcriptionModel?: string;
  /** Handshake plus session configuration. Default 10 s. */
  connectTimeoutMs?: number;
  /** Clock for estimating how much of the agent's audio has played (tests inject one). */
  now?: () => number;
}

export class VendorBRealtime implements ConversationProvider {
  readonly name: string;

  constructor(private readonly options: VendorBRealtimeOptions) {
    this.name = options.name ?? "vendorB";
  }

  /** Resolves once the server has confirmed the session configuration. Aborting `signal` later closes it. */
  async connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation> {
    const url = new URL(this.options.baseUrl);
    url.searchParams.set("model", options.model ?? VENDOR_B_DEFAULT_MODEL);
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const conversation = new VendorBConversation(this.name, this.options.now ?? Date.now);
    const headers = { authorization: `Bearer ${options.apiKey}` };
    const ws = await connectWebSocket(
      this.name,
      url.toString(),
      { headers, timeoutMs, signal },
      conversation,
    );
    const transcriptionModel = this.options.transcriptionModel ?? VENDOR_B_DEFAULT_TRANSCRIPTION_MODEL;
    await conversation.start(ws, vendorBSessionUpdate(options, transcriptionModel), timeoutMs, signal);
    return conversation;
  }
}

/** The agent's audio item being played: enough to truncate it where playback stands. */
interface Playback {
  itemId: string;
  receivedMs: number;
  startedAt: number;
}

interface ErrorObject {
  type?: unknown;
  code?: unknown;
  message?: unknown;
}

interface ResponseDone {
  id?: string;
  status?: string;
  status_details?: { error?: ErrorObject };
}

/** PCM 16-bit at 24 kHz: 48 bytes per millisecond. */
const BYTES_PER_MS = 48;

class VendorBConversation extends SocketConversation {
  private activeResponse: string | undefined;
  /** Responses cancelled or interrupted: their late audio and text are dropped. */
  private readonly discarded = new Set<string>();
  private playback: Playback | undefined;

  constructor(
    provider: string,
    private readonly now: () => number,
  ) {
    super(provider);
  }

  sendAudio(pcm: Uint8Array): void {
    if (pcm.length > 0) this.send({ type: "input_audio_buffer.append", audio: toBase64(pcm) });
  }

  sendText(text: string): void {
    this.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    this.send({ type: "response.create" });
  }

  /** Stops the answer being generated and cuts the agent's audio item where playback stands. */
  interrupt(): void {
    if (this.activeResponse && !this.discarded.has(this.activeResponse)) {
      this.discarded.add(this.activeResponse);
      this.send({ type: "response.cancel" });
    }
    this.truncatePlayback();
  }

  protected handle(event: Record<string, unknown>): void {
    switch (event.type) {
      case "session.updated":
        this.configured();
        return;
      case "error":
        this.onError((event.error ?? {}) as ErrorObject);
        return;
      case "response.created":
        this.activeResponse = (event.response as { id?: string } | undefined)?.id;
        return;
      case "response.output_audio.delta":
      case "response.audio.delta":
        this.onAudio(event);
        return;
      case "response.output_audio_transcript.delta":
      case "response.audio_transcript.delta":
        if (!this.isDiscarded(event) && typeof event.delta === "string") {
          this.events.push({ type: "agent_transcript", text: event.delta, final: false });
        }
        return;
      case "response.output_audio_transcript.done":
      case "response.audio_transcript.done":
        if (!this.isDiscarded(event) && typeof event.transcript === "string") {
          this.events.push({ type: "agent_transcript", text: event.transcript, final: true });
        }
        return;
      case "conversation.item.input_audio_transcription.delta":
        if (typeof event.delta === "string") {
          this.events.push({ type: "user_transcript", text: event.delta, final: false });
        }
        return;
      case "conversation.item.input_audio_transcription.completed":
        if (typeof event.transcript === "string") {
          this.events.push({ type: "user_transcript", text: event.transcript, final: true });
        }
        return;
      case "conversation.item.input_audio_transcription.failed": {
        const error = (event.error ?? {}) as ErrorObject;
        this.emitError(`transcription failed: ${String(error.message ?? "")}`, kindForErrorObject(error));
        return;
      }
      case "input_audio_buffer.speech_started":
        this.onSpeechStarted();
        return;
      case "response.done":
        this.onResponseDone((event.response ?? {}) as ResponseDone);
        return;
      default:
        // session.created, rate_limits.updated, conversation.item.*, content parts: nothing to report.
        return;
    }
  }

  private onAudio(event: Record<string, unknown>): void {
    if (this.isDiscarded(event) || typeof event.delta !== "string") return;
    const pcm = fromBase64(event.delta);
    const itemId = String(event.item_id ?? "");
    if (this.playback?.itemId !== itemId) this.playback = { itemId, receivedMs: 0, startedAt: this.now() };
    this.playback.receivedMs += pcm.length / BYTES_PER_MS;
    this.events.push({ type: "audio", pcm });
  }

  /** The server's voice detection heard the user: if the agent is talking, that is a barge-in. */
  private onSpeechStarted(): void {
    const generating = this.activeResponse !== undefined && !this.discarded.has(this.activeResponse);
    if (!generating && this.playedMs() === undefined) return;
    // The server cancels the response itself (interrupt_response); the client cuts what was not heard.
    if (this.activeResponse) this.discarded.add(this.activeResponse);
    this.truncatePlayback();
    this.events.push({ type: "interrupted" });
  }

  private onResponseDone(response: ResponseDone): void {
    if (response.status === "failed") {
      const error = response.status_details?.error ?? {};
      this.emitError(
        `response failed: ${String(error.message ?? error.code ?? "")}`,
        kindForErrorObject(error),
      );
    }
    if (response.id) this.discarded.delete(response.id);
    if (this.activeResponse === response.id) this.activeResponse = undefined;
    this.events.push({ type: "turn_done" });
  }

  private onError(error: ErrorObject): void {
    const message = typeof error.message === "string" ? error.message : "error";
    const failure = new ProviderError(
      this.provider,
      `${this.provider}: ${message}`,
      kindForErrorObject(error),
    );
    if (this.configuring) {
      this.failSetup(failure);
      return;
    }
    // Cancelling a response that finished while the cancel was on its way: a harmless race.
    if (error.code === "response_cancel_not_active") return;
    this.events.push({ type: "error", error: failure });
  }

  /**
   * Milliseconds of the current agent item heard so far, assuming playback in real time from its first
   * chunk; undefined when nothing is left to play.
   */
  private playedMs(): number | undefined {
    if (!this.playback) return undefined;
    const played = Math.max(0, this.now() - this.playback.startedAt);
    return played < this.playback.receivedMs ? played : undefined;
  }

  private truncatePlayback(): void {
    const played = this.playedMs();
    if (this.playback && played !== undefined) {
      this.send({
        type: "conversation.item.truncate",
        item_id: this.playback.itemId,
        content_index: 0,
        audio_end_ms: Math.floor(played),
      });
    }
    this.playback = undefined;
  }

  private isDiscarded(event: Record<string, unknown>): boolean {
    return typeof event.response_id === "string" && this.discarded.has(event.response_id);
  }
}
