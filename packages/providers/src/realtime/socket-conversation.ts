/**
 * The lifecycle both realtime clients share: a socket opened by `connectWebSocket`, a first message that
 * configures the session and must be confirmed by the server before the conversation is handed out,
 * JSON messages in, ConversationEvents out, and an `error` event when the server closes the socket on
 * its own. Subclasses map the messages.
 */
import type WebSocket from "ws";
import { AsyncQueue } from "../async-queue.js";
import { type Conversation, type ConversationEvent, ProviderError } from "../types.js";
import { frameText, type SocketHandlers } from "./ws-connect.js";

export abstract class SocketConversation implements Conversation, SocketHandlers {
  readonly events = new AsyncQueue<ConversationEvent>();
  protected ws: WebSocket | undefined;
  protected closed = false;
  private setup: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  /** Pending until the server confirms the configuration (messages may arrive before `start`). */
  private readonly ready = new Promise<void>((resolve, reject) => {
    this.setup = { resolve, reject };
  });
  private detachSignal: (() => void) | undefined;

  constructor(protected readonly provider: string) {
    // A failure before `start` awaits it must not count as unhandled.
    this.ready.catch(() => {});
  }

  abstract sendAudio(pcm: Uint8Array): void;
  abstract interrupt(): void;
  /** One parsed server message. */
  protected abstract handle(message: Record<string, unknown>): void;

  /** Sends the configuration and waits for the server to confirm it. Aborting `signal` later closes. */
  async start(ws: WebSocket, configuration: object, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.ws = ws;
    if (this.closed) ws.terminate();
    const timer = setTimeout(
      () =>
        this.failSetup(new ProviderError(this.provider, `${this.provider}: session not configured in time`)),
      timeoutMs,
    );
    const onAbort = () => this.failSetup(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.send(configuration);
    try {
      await this.ready;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal) {
      const close = () => this.close();
      signal.addEventListener("abort", close, { once: true });
      this.detachSignal = () => signal.removeEventListener("abort", close);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.detachSignal?.();
    this.ws?.close(1000);
    this.events.end();
  }

  onMessage(data: WebSocket.RawData): void {
    const text = frameText(data);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      message = undefined;
    }
    if (typeof message !== "object" || message === null) {
      this.emitError(`malformed server message: ${text.slice(0, 80)}`, "unavailable");
      return;
    }
    this.handle(message as Record<string, unknown>);
  }

  onClose(code: number, reason: string): void {
    const unexpected = !this.closed;
    this.closed = true;
    this.detachSignal?.();
    const error = this.closeError(code, reason);
    if (this.setup) this.failSetup(error);
    else if (unexpected) this.events.push({ type: "error", error });
    this.events.end();
  }

  /** What a close the client did not ask for means; vendors that close with a reason override it. */
  protected closeError(code: number, reason: string): ProviderError {
    return new ProviderError(
      this.provider,
      `${this.provider}: connection closed (${code}${reason ? ` ${reason}` : ""})`,
    );
  }

  protected get configuring(): boolean {
    return this.setup !== undefined;
  }

  protected configured(): void {
    this.setup?.resolve();
    this.setup = undefined;
  }

  protected failSetup(error: unknown): void {
    const setup = this.setup;
    if (!setup) return;
    this.setup = undefined;
    this.closed = true;
    this.ws?.terminate();
    this.events.end();
    setup.reject(error);
  }

  protected emitError(message: string, kind: ProviderError["kind"]): void {
    this.events.push({
      type: "error",
      error: new ProviderError(this.provider, `${this.provider}: ${message}`, kind),
    });
  }

  protected send(message: object): void {
    const ws = this.ws;
    if (!this.closed && ws && ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}
