/**
 * sttvendor2's universal-streaming (v3) WebSocket:
 *   {baseUrl}/v3/ws?sample_rate=16000&encoding=pcm_s16le&format_turns=true&speech_model=..
 * The key goes in the `Authorization` upgrade header as it is. The server opens with
 * `{type: "Begin", id, expires_at}`; the client then streams binary frames of raw 16 kHz PCM, each
 * between 50 and 1000 ms long (shorter or longer frames end the session with 3007). The server answers
 * `{type: "Turn", turn_order, transcript, end_of_turn, turn_is_formatted}`: the running transcript of
 * the turn while `end_of_turn` is false; at the end of a turn an unformatted message with `end_of_turn`
 * and, because format_turns is on, the same turn again formatted. `{type: "Terminate"}` makes it send the
 * turns in flight, `{type: "Termination"}`, and close with 1000.
 *
 * Failures: a refused handshake answers an HTTP status; later an `{type: "Error", error_code, error}`
 * message precedes a close with the same code: 1008/3009 "Unauthorized Connection: ..." for a bad key,
 * too many concurrent sessions or an account problem, 3006 invalid messages, 3007 audio frame violations,
 * 3005 server errors, 3008 session expired.
 */
import { connectWebSocket } from "../realtime/ws-connect.js";
import { socketUrl } from "../tts/ws-stream.js";
import { ProviderError, type SpeechRecognizer } from "../types.js";
import { AudioBatcher } from "./audio-batcher.js";
import { SocketRecognition, textField } from "./socket-recognition.js";

const PROVIDER = "sttvendor2";
export const STT_VENDOR_2_RATE = 16_000;
const BYTES_PER_MS = (STT_VENDOR_2_RATE * 2) / 1000;
/** The frame durations the protocol accepts. */
const MIN_FRAME_MS = 50;
const MAX_FRAME_MS = 1000;

export interface SttVendor2Options {
  baseUrl: string;
  apiKey: string;
  /** The provider's model; default: its English model for `en*`, its multilingual model otherwise. */
  speechModel?: string;
  connectTimeoutMs?: number;
  /** How long to wait for `Termination` after `end()`. Default 10 s. */
  finishTimeoutMs?: number;
}

export class SttVendor2Recognizer implements SpeechRecognizer {
  readonly name = PROVIDER;

  constructor(private readonly options: SttVendor2Options) {}

  async open(options: { language: string }, signal?: AbortSignal): Promise<SttVendor2Stream> {
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const stream = new SttVendor2Stream(this.options.finishTimeoutMs ?? 10_000);
    const url = socketUrl(this.options.baseUrl, "/v3/ws", {
      sample_rate: String(STT_VENDOR_2_RATE),
      encoding: "pcm_s16le",
      format_turns: "true",
      speech_model: this.options.speechModel ?? defaultSpeechModel(options.language),
    });
    const headers = { Authorization: this.options.apiKey };
    const ws = await connectWebSocket(PROVIDER, url, { headers, timeoutMs, signal }, stream);
    await stream.start(ws, timeoutMs, signal);
    return stream;
  }
}

function defaultSpeechModel(language: string): string {
  return /^en\b/i.test(language) ? "universal-streaming-english" : "universal-streaming-multilingual";
}

interface Turn {
  turn_order?: unknown;
  transcript?: unknown;
  end_of_turn?: unknown;
  turn_is_formatted?: unknown;
}

export class SttVendor2Stream extends SocketRecognition {
  private readonly batcher = new AudioBatcher(MIN_FRAME_MS * BYTES_PER_MS, MAX_FRAME_MS * BYTES_PER_MS);
  /** A turn that ended unformatted: its formatted version is the final text. */
  private unformatted: { order: unknown; text: string } | undefined;

  constructor(finishTimeoutMs: number) {
    super(PROVIDER, STT_VENDOR_2_RATE, finishTimeoutMs);
  }

  protected override get confirmsStart(): boolean {
    return true;
  }

  protected sendAudio(pcm: Uint8Array): void {
    for (const frame of this.batcher.push(pcm)) this.sendFrame(frame);
  }

  /** The tail is padded with silence to the protocol's minimum frame length. */
  protected override flushAudio(): void {
    const tail = this.batcher.flush();
    if (tail) this.sendFrame(tail);
  }

  protected sendEnd(): void {
    this.sendJson({ type: "Terminate" });
  }

  protected handle(message: Record<string, unknown>): void {
    switch (message.type) {
      case "Begin":
        this.confirmed();
        return;
      case "Turn":
        this.onTurn(message as Turn);
        return;
      case "Termination":
        this.settleTurn();
        this.finished();
        return;
      case "Error": {
        const code = typeof message.error_code === "number" ? message.error_code : undefined;
        const text = textField(message.error) || "error";
        this.fail(
          new ProviderError(PROVIDER, `${code ?? "error"}: ${text}`, sttVendor2ErrorKind(code, text)),
        );
        return;
      }
      default:
      // SpeechStarted and messages of later protocol versions: nothing to report.
    }
  }

  protected override closeError(code: number, reason: string): ProviderError {
    const detail = reason ? `: ${reason}` : "";
    return new ProviderError(PROVIDER, `closed with ${code}${detail}`, sttVendor2ErrorKind(code, reason));
  }

  private onTurn(turn: Turn): void {
    if (this.unformatted && this.unformatted.order !== turn.turn_order) this.settleTurn();
    const text = textField(turn.transcript).trim();
    if (turn.end_of_turn !== true) {
      if (text) this.emit({ type: "partial", text });
      return;
    }
    if (turn.turn_is_formatted !== true) {
      this.unformatted = { order: turn.turn_order, text };
      return;
    }
    this.unformatted = undefined;
    this.finishTurn(text);
  }

  /** A turn whose formatted version never came (a new turn started, or the session ended). */
  private settleTurn(): void {
    const pending = this.unformatted;
    if (!pending) return;
    this.unformatted = undefined;
    this.finishTurn(pending.text);
  }

  private finishTurn(text: string): void {
    if (text) this.emit({ type: "final", text });
    this.emit({ type: "end_of_turn" });
  }
}

/** Close codes and error texts: the protocol puts limits, keys and account problems all under 1008/3009. */
export function sttVendor2ErrorKind(code: number | undefined, text: string): ProviderError["kind"] {
  if (/concurren|too many|balance|insufficient|quota|rate.?limit/i.test(text)) return "rate_limited";
  if (code === 1008 || code === 3009 || code === 4001 || /unauthori[sz]ed|api key|token/i.test(text))
    return "unauthorized";
  if (code === 3006 || code === 3007 || code === 1007 || /invalid|violation/i.test(text))
    return "bad_request";
  return "unavailable";
}
