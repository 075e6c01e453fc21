/**
 * sttvendor3's realtime WebSocket: {baseUrl}/v2 with the key in `Authorization: Bearer <key>`.
 * The client first sends `StartRecognition` (raw pcm_s16le at 16 kHz, the language, partials on) and
 * waits for `RecognitionStarted`; audio then goes out as binary frames (each one an "AddAudio", numbered
 * from 1, acknowledged by `AudioAdded {seq_no}`). The server answers `AddPartialTranscript` and
 * `AddTranscript` ({metadata: {transcript}}: partials are revised, transcripts are final segments) and,
 * when asked for it, `EndOfUtterance`. `{message: "EndOfStream", last_seq_no}` makes it finish the
 * audio and answer `EndOfTranscript`.
 *
 * Failures: a refused handshake answers HTTP 401 (bad key) or 400; later `{message: "Error", type,
 * reason}` comes before the server closes (not_authorised 4001, insufficient_funds 4002, quota_exceeded
 * 4005 when over the concurrency quota, invalid_* and protocol_error for bad requests, job_error 4013,
 * internal_error 1011). `Warning` and `Info` messages report nothing fatal.
 */
import { connectWebSocket } from "../realtime/ws-connect.js";
import { kindFromText } from "../tts/ws-errors.js";
import { socketUrl } from "../tts/ws-stream.js";
import { ProviderError, type SpeechRecognizer } from "../types.js";
import { SocketRecognition, textField } from "./socket-recognition.js";

const PROVIDER = "sttvendor3";
export const STT_VENDOR_3_RATE = 16_000;

export interface SttVendor3Options {
  baseUrl: string;
  apiKey: string;
  /**
   * Asks the server for `EndOfUtterance` after this much silence (seconds), reported as `end_of_turn`.
   * Off by default: the pipeline detects turns itself.
   */
  endOfUtteranceSilenceSeconds?: number;
  connectTimeoutMs?: number;
  /** How long to wait for `EndOfTranscript` after `end()`. Default 10 s. */
  finishTimeoutMs?: number;
}

export class SttVendor3Recognizer implements SpeechRecognizer {
  readonly name = PROVIDER;

  constructor(private readonly options: SttVendor3Options) {}

  async open(options: { language: string }, signal?: AbortSignal): Promise<SttVendor3Stream> {
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const stream = new SttVendor3Stream(
      sttVendor3StartMessage(options.language, this.options.endOfUtteranceSilenceSeconds),
      this.options.finishTimeoutMs ?? 10_000,
    );
    const headers = { Authorization: `Bearer ${this.options.apiKey}` };
    const ws = await connectWebSocket(
      PROVIDER,
      socketUrl(this.options.baseUrl, "/v2"),
      { headers, timeoutMs, signal },
      stream,
    );
    await stream.start(ws, timeoutMs, signal);
    return stream;
  }
}

export function sttVendor3StartMessage(language: string, endOfUtteranceSilenceSeconds?: number): object {
  const message: Record<string, unknown> = {
    message: "StartRecognition",
    audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: STT_VENDOR_3_RATE },
    // The protocol takes the bare language code ("en", not "en-US").
    transcription_config: {
      language: language.split(/[-_]/)[0]?.toLowerCase() ?? language,
      enable_partials: true,
    },
  };
  if (endOfUtteranceSilenceSeconds !== undefined) {
    message.conversation_config = { end_of_utterance_silence_trigger: endOfUtteranceSilenceSeconds };
  }
  return message;
}

export class SttVendor3Stream extends SocketRecognition {
  /** AddAudio frames sent so far: the last one's number is what EndOfStream reports. */
  private sequence = 0;

  constructor(
    private readonly startRequest: object,
    finishTimeoutMs: number,
  ) {
    super(PROVIDER, STT_VENDOR_3_RATE, finishTimeoutMs);
  }

  protected override startMessage(): object {
    return this.startRequest;
  }

  protected override get confirmsStart(): boolean {
    return true;
  }

  protected sendAudio(pcm: Uint8Array): void {
    this.sequence += 1;
    this.sendFrame(pcm);
  }

  protected sendEnd(): void {
    this.sendJson({ message: "EndOfStream", last_seq_no: this.sequence });
  }

  protected handle(message: Record<string, unknown>): void {
    switch (message.message) {
      case "RecognitionStarted":
        this.confirmed();
        return;
      case "AddPartialTranscript":
      case "AddTranscript": {
        const text = textField((message.metadata as { transcript?: unknown } | undefined)?.transcript).trim();
        if (text) this.emit({ type: message.message === "AddTranscript" ? "final" : "partial", text });
        return;
      }
      case "EndOfUtterance":
        this.emit({ type: "end_of_turn" });
        return;
      case "EndOfTranscript":
        this.finished();
        return;
      case "Error": {
        const type = textField(message.type) || "error";
        const reason = textField(message.reason);
        this.fail(
          new ProviderError(
            PROVIDER,
            reason ? `${type}: ${reason}` : type,
            sttVendor3ErrorKind(type, reason),
          ),
        );
        return;
      }
      default:
      // AudioAdded, Warning, Info: nothing to report.
    }
  }

  /** A close without an Error message before it: its code says what the Error would have. */
  protected override closeError(code: number, reason: string): ProviderError {
    const type = CLOSE_TYPES[code];
    if (!type) return super.closeError(code, reason);
    const detail = reason ? `: ${reason}` : "";
    return new ProviderError(
      PROVIDER,
      `closed with ${code} (${type})${detail}`,
      sttVendor3ErrorKind(type, reason),
    );
  }
}

const CLOSE_TYPES: Record<number, string> = {
  4001: "not_authorised",
  4002: "insufficient_funds",
  4003: "not_allowed",
  4004: "invalid_model",
  4005: "quota_exceeded",
  4006: "timelimit_exceeded",
  4013: "job_error",
};

/** The kind of an Error message's `type`. */
export function sttVendor3ErrorKind(type: string, reason: string): ProviderError["kind"] {
  if (type === "not_authorised") return "unauthorized";
  if (type === "quota_exceeded" || type === "insufficient_funds") return "rate_limited";
  if (/^invalid_/.test(type) || type === "protocol_error" || type === "not_allowed") return "bad_request";
  return kindFromText(reason);
}
