/**
 * sttvendor1's live transcription WebSocket:
 *   {baseUrl}/v1/listen?encoding=linear16&sample_rate=24000&channels=1&interim_results=true&punctuate=true&language=..
 * The key goes in the `Authorization: Token <key>` upgrade header. Audio goes out as binary frames of
 * raw 24 kHz PCM, never an empty one (the server would read it as the end of the stream). The server
 * answers JSON `Results` ({channel: {alternatives: [{transcript}]}, is_final, speech_final}: interim
 * until `is_final`, `speech_final` marking its endpoint), `Metadata`, `SpeechStarted` and
 * `UtteranceEnd`. It closes a socket that has carried nothing for about 10 s (1011 NET-0001), so the
 * client sends `{type: "KeepAlive"}` while no audio flows. `{type: "CloseStream"}` makes it flush its
 * last results, send `Metadata` and close with 1000.
 *
 * Failures: a refused handshake answers HTTP 401 (bad key), 429 (too many requests) or another 4xx/5xx;
 * later the server closes with a code and a reason (1008 DATA-0000 undecodable audio, 1011 NET-0000 and
 * NET-0001 timeouts).
 */
import { connectWebSocket } from "../realtime/ws-connect.js";
import { kindFromText } from "../tts/ws-errors.js";
import { socketUrl } from "../tts/ws-stream.js";
import { ProviderError, SESSION_SAMPLE_RATE, type SpeechRecognizer } from "../types.js";
import { SocketRecognition, textField } from "./socket-recognition.js";

const PROVIDER = "sttvendor1";

export interface SttVendor1Options {
  baseUrl: string;
  apiKey: string;
  /** The provider's model name; its default when absent. */
  model?: string;
  /** Asks for `UtteranceEnd` messages after this much silence (the provider's minimum is 1000). */
  utteranceEndMs?: number;
  /** KeepAlive interval while no audio is sent. Default 4000 ms. */
  keepAliveMs?: number;
  connectTimeoutMs?: number;
  /** How long to wait for the last results after `end()`. Default 10 s. */
  finishTimeoutMs?: number;
}

export class SttVendor1Recognizer implements SpeechRecognizer {
  readonly name = PROVIDER;

  constructor(private readonly options: SttVendor1Options) {}

  async open(options: { language: string }, signal?: AbortSignal): Promise<SttVendor1Stream> {
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const stream = new SttVendor1Stream(
      this.options.keepAliveMs ?? 4000,
      this.options.finishTimeoutMs ?? 10_000,
    );
    const headers = { Authorization: `Token ${this.options.apiKey}` };
    const ws = await connectWebSocket(
      PROVIDER,
      sttVendor1ListenUrl(this.options, options.language),
      { headers, timeoutMs, signal },
      stream,
    );
    await stream.start(ws, timeoutMs, signal);
    return stream;
  }
}

export function sttVendor1ListenUrl(options: SttVendor1Options, language: string): string {
  return socketUrl(options.baseUrl, "/v1/listen", {
    encoding: "linear16",
    sample_rate: String(SESSION_SAMPLE_RATE),
    channels: "1",
    interim_results: "true",
    punctuate: "true",
    language,
    model: options.model,
    utterance_end_ms: options.utteranceEndMs === undefined ? undefined : String(options.utteranceEndMs),
  });
}

interface Results {
  channel?: { alternatives?: { transcript?: unknown }[] };
  is_final?: unknown;
  speech_final?: unknown;
}

export class SttVendor1Stream extends SocketRecognition {
  private keepAlive: NodeJS.Timeout | undefined;
  /** Final words arrived since the last end of turn. */
  private turnOpen = false;

  constructor(
    private readonly keepAliveMs: number,
    finishTimeoutMs: number,
  ) {
    super(PROVIDER, SESSION_SAMPLE_RATE, finishTimeoutMs);
  }

  override async start(...args: Parameters<SocketRecognition["start"]>): Promise<void> {
    await super.start(...args);
    this.keepAlive = setTimeout(() => this.sendKeepAlive(), this.keepAliveMs);
  }

  protected sendAudio(pcm: Uint8Array): void {
    this.sendFrame(pcm);
    // Audio keeps the connection alive: the next KeepAlive is due a full interval from now.
    this.keepAlive?.refresh();
  }

  protected sendEnd(): void {
    this.sendJson({ type: "CloseStream" });
  }

  protected override onShutdown(): void {
    clearTimeout(this.keepAlive);
  }

  protected handle(message: Record<string, unknown>): void {
    switch (message.type) {
      case "Results":
        this.onResults(message as Results);
        return;
      case "UtteranceEnd":
        this.endTurn();
        return;
      case "Error": {
        const text = [message.description, message.message, message.variant]
          .filter((v) => typeof v === "string")
          .join(": ");
        this.fail(new ProviderError(PROVIDER, text || "error", kindFromText(text)));
        return;
      }
      default:
      // Metadata, SpeechStarted: nothing to report.
    }
  }

  private onResults(results: Results): void {
    const alternative = results.channel?.alternatives?.[0];
    if (!alternative) {
      this.emit({
        type: "error",
        error: new ProviderError(PROVIDER, "malformed frame: Results without alternatives"),
      });
      return;
    }
    const text = textField(alternative.transcript).trim();
    if (results.is_final !== true) {
      if (text) this.emit({ type: "partial", text });
      return;
    }
    if (text) {
      this.emit({ type: "final", text });
      this.turnOpen = true;
    }
    if (results.speech_final === true) this.endTurn();
  }

  /** `speech_final` and `UtteranceEnd` may both close the same turn: report it once. */
  private endTurn(): void {
    if (!this.turnOpen) return;
    this.turnOpen = false;
    this.emit({ type: "end_of_turn" });
  }

  private sendKeepAlive(): void {
    this.sendJson({ type: "KeepAlive" });
    this.keepAlive?.refresh();
  }
}
