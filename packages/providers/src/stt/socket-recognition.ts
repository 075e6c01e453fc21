/**
 * The lifecycle every streaming speech recognizer shares: a socket opened by `connectWebSocket`, an
 * optional first message and a server confirmation before the stream is handed out, the session's
 * 24 kHz audio resampled to the provider's rate, JSON messages in, RecognitionEvents out, an end of
 * audio that waits for the server to flush its last results, and errors that end the stream.
 *
 * What the events mean, for every provider:
 * - `partial`: the provider's current guess for the words not yet final (replaces the previous partial);
 * - `final`: words that will not change, in order; the next partial starts after them;
 * - `end_of_turn`: the provider's own endpointing says the speaker finished (not every provider has it);
 * - `error`: a failure; a fatal one is the last event.
 */
import type WebSocket from "ws";
import { AsyncQueue } from "../async-queue.js";
import { PcmResampler } from "../audio/stream-resampler.js";
import { frameText, type SocketHandlers } from "../realtime/ws-connect.js";
import { errorFromClose, malformed } from "../tts/ws-errors.js";
import {
  ProviderError,
  type RecognitionEvent,
  type RecognitionStream,
  SESSION_SAMPLE_RATE,
} from "../types.js";

type Phase = "starting" | "streaming" | "ending" | "done";

export abstract class SocketRecognition implements RecognitionStream, SocketHandlers {
  readonly events = new AsyncQueue<RecognitionEvent>();
  protected ws: WebSocket | undefined;
  private phase: Phase = "starting";
  private readonly resampler: PcmResampler | undefined;
  private setup: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  private readonly ready: Promise<void>;
  private finishTimer: NodeJS.Timeout | undefined;
  private detachSignal: (() => void) | undefined;

  constructor(
    protected readonly provider: string,
    /** The sample rate the provider takes. */
    audioRate: number,
    private readonly finishTimeoutMs: number,
  ) {
    this.resampler =
      audioRate === SESSION_SAMPLE_RATE ? undefined : new PcmResampler(SESSION_SAMPLE_RATE, audioRate);
    this.ready = new Promise<void>((resolve, reject) => {
      this.setup = { resolve, reject };
    });
    // A failure before `start` awaits it must not count as unhandled.
    this.ready.catch(() => {});
  }

  /** Sends audio already at the provider's rate (never empty). */
  protected abstract sendAudio(pcm: Uint8Array): void;
  /** Sends the protocol's "no more audio" message. */
  protected abstract sendEnd(): void;
  /** One parsed server message. */
  protected abstract handle(message: Record<string, unknown>): void;

  /** The first message, sent as soon as the socket is open. */
  protected startMessage(): object | undefined {
    return undefined;
  }

  /** True when the server confirms the start with a message (the subclass then calls `confirmed`). */
  protected get confirmsStart(): boolean {
    return false;
  }

  /** Audio held back by the subclass (minimum chunk sizes), sent before the end message. */
  protected flushAudio(): void {}

  /** Timers and other resources of the subclass. */
  protected onShutdown(): void {}

  /** What a close the client did not ask for means. */
  protected closeError(code: number, reason: string): ProviderError {
    return errorFromClose(this.provider, code, reason);
  }

  /** Sends the start message and waits for the confirmation. Aborting `signal` later closes the stream. */
  async start(ws: WebSocket, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.ws = ws;
    if (this.phase === "done") ws.terminate();
    const first = this.startMessage();
    if (first) this.sendJson(first);
    if (!this.confirmsStart) this.confirmed();
    const timer = setTimeout(
      () =>
        this.failSetup(new ProviderError(this.provider, `the session did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onAbort = () => this.failSetup(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await this.ready;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    // It may have ended already (an error right after the confirmation): its events say so.
    if (this.phase === "done") return;
    if (signal) {
      const close = () => this.close();
      signal.addEventListener("abort", close, { once: true });
      this.detachSignal = () => signal.removeEventListener("abort", close);
    }
  }

  write(pcm: Uint8Array): void {
    if (this.phase !== "streaming") return;
    const audio = this.resampler ? this.resampler.process(pcm) : pcm;
    if (audio.length > 0) this.sendAudio(audio);
  }

  end(): void {
    if (this.phase !== "streaming") return;
    this.phase = "ending";
    this.finishTimer = setTimeout(
      () =>
        this.fail(
          new ProviderError(
            this.provider,
            `no end of the results within ${this.finishTimeoutMs} ms of the audio's end`,
          ),
        ),
      this.finishTimeoutMs,
    );
    this.flushAudio();
    this.sendEnd();
  }

  close(): void {
    if (this.phase === "starting")
      this.failSetup(new ProviderError(this.provider, "closed before the session started"));
    else this.shutdown();
  }

  onMessage(data: WebSocket.RawData): void {
    if (this.phase === "done") return;
    const text = frameText(data);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      message = undefined;
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      const error = malformed(this.provider, `not a JSON object: ${text.slice(0, 80)}`);
      if (this.phase === "starting") this.failSetup(error);
      else this.events.push({ type: "error", error });
      return;
    }
    this.handle(message as Record<string, unknown>);
  }

  onClose(code: number, reason: string): void {
    if (this.phase === "starting") {
      this.failSetup(this.closeError(code, reason));
      return;
    }
    if (this.phase === "done") return;
    // After the end of the audio the server closing normally is how some protocols finish.
    const normalEnd = this.phase === "ending" && (code === 1000 || code === 1005);
    if (!normalEnd) this.events.push({ type: "error", error: this.closeError(code, reason) });
    this.shutdown();
  }

  protected get ending(): boolean {
    return this.phase === "ending";
  }

  protected emit(event: RecognitionEvent): void {
    if (this.phase !== "done" && this.phase !== "starting") this.events.push(event);
  }

  /** The server accepted the session: what follows (even before `start` returns) belongs to the stream. */
  protected confirmed(): void {
    if (!this.setup) return;
    this.phase = "streaming";
    this.setup.resolve();
    this.setup = undefined;
  }

  /** The server delivered its last result: the stream is complete. */
  protected finished(): void {
    this.shutdown();
  }

  /** A fatal failure: reported as the stream's last event (or as `open`'s rejection while starting). */
  protected fail(error: ProviderError): void {
    if (this.phase === "starting") {
      this.failSetup(error);
      return;
    }
    if (this.phase === "done") return;
    this.events.push({ type: "error", error });
    this.shutdown();
  }

  protected sendJson(message: object): void {
    this.sendFrame(JSON.stringify(message));
  }

  protected sendFrame(frame: string | Uint8Array): void {
    const ws = this.ws;
    if (ws && ws.readyState === ws.OPEN) ws.send(frame);
  }

  private failSetup(error: unknown): void {
    const setup = this.setup;
    if (!setup) return;
    this.setup = undefined;
    this.phase = "done";
    this.onShutdown();
    this.ws?.terminate();
    this.events.end();
    setup.reject(error);
  }

  private shutdown(): void {
    if (this.phase === "done") return;
    this.phase = "done";
    clearTimeout(this.finishTimer);
    this.detachSignal?.();
    this.onShutdown();
    const ws = this.ws;
    if (ws && (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING)) ws.close(1000);
    this.events.end();
  }
}

/** Text the provider sent, or "" when the field is missing or not a string. */
export function textField(value: unknown): string {
  return typeof value === "string" ? value : "";
}
