/**
 * vendorA's realtime speech-to-text WebSocket:
 *   {baseUrl}/v1/speech-to-text/realtime?model_id=..&audio_format=pcm_16000&language_code=..&commit_strategy=..
 * The key goes in the `xi-api-key` upgrade header. The server opens with
 * `{message_type: "session_started", session_id, config}`. Audio goes out as JSON
 * `{message_type: "input_audio_chunk", audio_base_64, commit, sample_rate}` (16 kHz PCM). The server
 * answers `partial_transcript {text}` (the uncommitted words, revised) and `committed_transcript {text}`
 * (final) after each commit; with the `vad` commit strategy it commits by itself when the speaker
 * pauses, and a chunk with `commit: true` commits what is left. The protocol has no end-of-stream
 * message: after the last commit's transcript the client closes.
 *
 * Failures: a refused handshake answers an HTTP status; later an error message
 * `{message_type: <error type>, error}` comes before the server closes. `commit_throttled` and
 * `insufficient_audio_activity` only say a commit was not done.
 */
import { connectWebSocket, toBase64 } from "../realtime/ws-connect.js";
import { kindFromText } from "../tts/ws-errors.js";
import { socketUrl } from "../tts/ws-stream.js";
import { ProviderError, type SpeechRecognizer } from "../types.js";
import { SocketRecognition, textField } from "./socket-recognition.js";

const PROVIDER = "vendorA";
export const VENDOR_A_STT_RATE = 16_000;

/** Fatal error message types and what they mean for the session. */
const ERROR_KINDS: Record<string, ProviderError["kind"]> = {
  auth_error: "unauthorized",
  unaccepted_terms: "unauthorized",
  quota_exceeded: "rate_limited",
  rate_limited: "rate_limited",
  queue_overflow: "rate_limited",
  resource_exhausted: "rate_limited",
  input_error: "bad_request",
  invalid_request: "bad_request",
  chunk_size_exceeded: "bad_request",
  session_time_limit_exceeded: "unavailable",
  transcriber_error: "unavailable",
  error: "unavailable",
};
/** Notices that a commit was not done; the session goes on. */
const COMMIT_NOTICES = new Set(["commit_throttled", "insufficient_audio_activity"]);

export interface VendorASttOptions {
  baseUrl: string;
  apiKey: string;
  /** The realtime model's wire id. */
  modelId: string;
  /**
   * `vad` (default): the server commits when the speaker pauses, reported as `final` + `end_of_turn`;
   * `manual`: only the end of the audio commits.
   */
  commitStrategy?: "vad" | "manual";
  connectTimeoutMs?: number;
  /** How long to wait for the last commit's transcript after `end()`. Default 10 s. */
  finishTimeoutMs?: number;
}

export class VendorARecognizer implements SpeechRecognizer {
  readonly name = PROVIDER;

  constructor(private readonly options: VendorASttOptions) {}

  async open(options: { language: string }, signal?: AbortSignal): Promise<VendorASttStream> {
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const commitStrategy = this.options.commitStrategy ?? "vad";
    const stream = new VendorASttStream(commitStrategy === "vad", this.options.finishTimeoutMs ?? 10_000);
    const url = socketUrl(this.options.baseUrl, "/v1/speech-to-text/realtime", {
      model_id: this.options.modelId,
      audio_format: `pcm_${VENDOR_A_STT_RATE}`,
      language_code: options.language.split(/[-_]/)[0]?.toLowerCase(),
      commit_strategy: commitStrategy,
    });
    const headers = { "xi-api-key": this.options.apiKey };
    const ws = await connectWebSocket(PROVIDER, url, { headers, timeoutMs, signal }, stream);
    await stream.start(ws, timeoutMs, signal);
    return stream;
  }
}

export class VendorASttStream extends SocketRecognition {
  /** The latest partial since the last commit. */
  private partial = "";

  constructor(
    private readonly serverCommits: boolean,
    finishTimeoutMs: number,
  ) {
    super(PROVIDER, VENDOR_A_STT_RATE, finishTimeoutMs);
  }

  protected override get confirmsStart(): boolean {
    return true;
  }

  protected sendAudio(pcm: Uint8Array): void {
    this.sendJson(audioChunk(toBase64(pcm), false));
  }

  /** Commits the rest; with nothing uncommitted there is no transcript to wait for. */
  protected sendEnd(): void {
    this.sendJson(audioChunk("", true));
    if (!this.partial) this.finished();
  }

  protected handle(message: Record<string, unknown>): void {
    const type = textField(message.message_type);
    switch (type) {
      case "session_started":
        this.confirmed();
        return;
      case "partial_transcript": {
        this.partial = textField(message.text).trim();
        if (this.partial) this.emit({ type: "partial", text: this.partial });
        return;
      }
      case "committed_transcript":
        this.commit(textField(message.text).trim());
        return;
      case "committed_transcript_with_timestamps":
        // The same words again, with timings.
        return;
    }
    if (COMMIT_NOTICES.has(type)) {
      // At the end the last partial is all there will be: keep it.
      if (this.ending) this.commit(this.partial);
      return;
    }
    // Error types added after these were written still carry an `error` text.
    const kind =
      ERROR_KINDS[type] ?? (typeof message.error === "string" ? kindFromText(message.error) : undefined);
    if (kind) {
      const detail = textField(message.error) || textField(message.message);
      this.fail(new ProviderError(PROVIDER, detail ? `${type}: ${detail}` : type, kind));
    }
  }

  private commit(text: string): void {
    this.partial = "";
    if (text) {
      this.emit({ type: "final", text });
      if (this.serverCommits) this.emit({ type: "end_of_turn" });
    }
    if (this.ending) this.finished();
  }
}

function audioChunk(audio: string, commit: boolean): object {
  return { message_type: "input_audio_chunk", audio_base_64: audio, commit, sample_rate: VENDOR_A_STT_RATE };
}
