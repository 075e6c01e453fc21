import type { RecognitionStream } from "@avatar/providers";
import type { SessionProviders } from "../providers/session-providers.js";
import type { SessionContext } from "../realtime/mode.js";
import { isAbort, reportFailure } from "./problems.js";
import { type TurnStart, turnStart } from "./transcript.js";

/**
 * One stretch of the user's speech through speech recognition. Audio is held while the recognizer
 * connects and then sent in order. `user.transcription.chunk {text}` carries the utterance's running
 * text (its final words plus the provider's current guess) each time it changes; the finished text is
 * the final words (and a last guess the provider never finalized).
 */
export class UserUtterance {
  readonly start: TurnStart;
  private stream: RecognitionStream | undefined;
  private held: Uint8Array[] = [];
  private ended = false;
  private cancelled = false;
  private readonly finals: string[] = [];
  private partial = "";
  private readonly controller = new AbortController();
  private readonly result: Promise<string>;

  constructor(
    private readonly ctx: SessionContext,
    private readonly providers: SessionProviders,
  ) {
    this.start = turnStart(ctx);
    this.result = this.recognize();
  }

  write(pcm: Uint8Array): void {
    if (this.ended || this.cancelled) return;
    if (this.stream) this.stream.write(pcm);
    else this.held.push(pcm);
  }

  /** No more audio: resolves with the utterance's text ("" when nothing was recognized). */
  finish(): Promise<string> {
    if (!this.ended) {
      this.ended = true;
      this.stream?.end();
    }
    return this.result;
  }

  /** Drops the utterance: nothing more is sent for it. */
  cancel(): void {
    this.cancelled = true;
    this.ended = true;
    this.controller.abort();
    this.stream?.close();
  }

  private get text(): string {
    return [...this.finals, this.partial].join(" ").replace(/\s+/g, " ").trim();
  }

  private async recognize(): Promise<string> {
    const stream = await this.open();
    if (!stream) return "";
    this.stream = stream;
    for (const pcm of this.held) stream.write(pcm);
    this.held = [];
    if (this.ended) stream.end();
    for await (const event of stream.events) {
      if (this.cancelled) break;
      if (event.type === "partial") this.partial = event.text;
      else if (event.type === "final") {
        this.finals.push(event.text);
        this.partial = "";
      } else if (event.type === "error") {
        reportFailure(this.ctx, "speech recognition", event.error, { severity: "warning" });
        continue;
      } else continue;
      this.ctx.send({ type: "user.transcription.chunk", text: this.text });
    }
    return this.cancelled ? "" : this.text;
  }

  private async open(): Promise<RecognitionStream | undefined> {
    try {
      const recognizer = await this.providers.recognizer();
      if (!recognizer || this.cancelled) return undefined;
      const stream = await recognizer.open(
        { language: this.ctx.config.language || "en" },
        this.controller.signal,
      );
      if (this.cancelled) {
        stream.close();
        return undefined;
      }
      return stream;
    } catch (err) {
      if (!isAbort(err, this.controller.signal)) {
        reportFailure(this.ctx, "speech recognition", err, { severity: "warning" });
      }
      return undefined;
    }
  }
}
