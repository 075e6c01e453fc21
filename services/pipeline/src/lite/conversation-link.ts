import { SessionEndReason } from "@avatar/contracts/sessions";
import type { Conversation, ConversationEvent } from "@avatar/providers";
import { ProviderError } from "@avatar/providers";
import { countProviderError } from "../metrics/pipeline-metrics.js";
import type { SessionProviders } from "../providers/session-providers.js";
import type { SessionContext } from "../realtime/mode.js";
import { publicFailure } from "../realtime/provider-failure.js";

/** Where the agent's output goes in the LITE session. */
export interface ConversationSink {
  /** Agent audio (24 kHz PCM): it plays as the agent's utterance. */
  audio(pcm: Uint8Array): void;
  /** The agent finished its turn: its utterance is complete. */
  turnDone(): void;
  /** The user spoke over the agent: what is queued stops. */
  interrupted(): void;
}

/**
 * A LITE session's hosted agent or realtime model (SessionProviders.conversation()): connected when the
 * first client connects, its audio played as agent utterances, its final transcripts written to the
 * session's transcript, every raw vendorA event forwarded as `vendorA_agent_event`, its hang-up ending
 * the session with AGENT_HANG_UP. A provider failure (429 included) becomes a `warning` or `error`
 * event; the session goes on without the agent.
 */
export class ConversationLink {
  private conversation: Conversation | undefined;
  private readonly abort = new AbortController();
  private stopped = false;
  private hungUp = false;

  constructor(
    private readonly ctx: SessionContext,
    private readonly providers: SessionProviders,
    private readonly sink: ConversationSink,
    /** Forward raw provider events as `vendorA_agent_event` (a vendorA agent session). */
    private readonly forwardRaw: boolean,
  ) {}

  get connected(): Conversation | undefined {
    return this.conversation;
  }

  async start(): Promise<void> {
    let found: Awaited<ReturnType<SessionProviders["conversation"]>>;
    try {
      found = await this.providers.conversation();
    } catch (err) {
      return this.report(err);
    }
    if (this.stopped) return;
    if (!found) {
      this.ctx.sendWarning("agent_unavailable", "the session's agent is not available; it runs without one");
      return;
    }
    let conversation: Conversation;
    try {
      conversation = await found.provider.connect(found.options, this.abort.signal);
    } catch (err) {
      if (!this.stopped) this.report(err);
      return;
    }
    if (this.stopped) {
      conversation.close();
      return;
    }
    this.conversation = conversation;
    void this.pump(conversation);
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.conversation?.close();
  }

  private async pump(conversation: Conversation): Promise<void> {
    try {
      for await (const event of conversation.events) {
        if (this.stopped) return;
        this.onEvent(event);
      }
    } catch (err) {
      if (!this.stopped) this.report(err);
    }
    if (this.conversation === conversation) this.conversation = undefined;
    if (!this.stopped && !this.hungUp) {
      this.ctx.sendWarning(
        "agent_disconnected",
        "the agent's connection ended; the session goes on without it",
      );
    }
  }

  private onEvent(event: ConversationEvent): void {
    switch (event.type) {
      case "audio":
        this.sink.audio(event.pcm);
        return;
      case "turn_done":
        this.sink.turnDone();
        return;
      case "interrupted":
        this.sink.interrupted();
        return;
      case "user_transcript":
      case "agent_transcript":
        if (event.final && event.text.trim())
          this.transcribe(event.type === "user_transcript" ? "user" : "avatar", event.text);
        return;
      case "raw":
        if (this.forwardRaw) {
          this.ctx.send({
            type: "vendorA_agent_event",
            vendorA_event_type: event.eventType,
            data: event.data,
          });
        }
        return;
      case "hang_up":
        this.hungUp = true;
        void this.ctx.end(SessionEndReason.AGENT_HANG_UP);
        return;
      case "error":
        this.report(event.error);
        return;
    }
  }

  private transcribe(role: "user" | "avatar", text: string): void {
    this.ctx.appendTranscript([
      {
        entryId: crypto.randomUUID(),
        role,
        transcript: text,
        absoluteTimestamp: BigInt(Math.round(this.ctx.now())),
        relativeTimestamp: BigInt(Math.round(this.ctx.sinceStart())),
      },
    ]);
  }

  private report(err: unknown): void {
    countProviderError(err);
    const message = publicFailure(this.ctx.log, "the session's agent", err);
    if (err instanceof ProviderError && err.kind === "rate_limited") {
      this.ctx.sendWarning("provider_rate_limited", message);
    } else {
      this.ctx.sendError("provider_error", message);
    }
  }
}
