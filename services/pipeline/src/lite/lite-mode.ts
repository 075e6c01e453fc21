import type { SessionProvidersFactory } from "../providers/session-providers.js";
import { type Clock, systemClock, Timer } from "../realtime/clock.js";
import { LITE_CLIENT_EVENTS } from "../realtime/event-types.js";
import type { ClientEvent, ModeFactory, ModeHandler, SessionContext } from "../realtime/mode.js";
import type { Turn } from "../realtime/turn-metrics.js";
import { AgentState } from "./agent-state.js";
import { ConversationLink } from "./conversation-link.js";
import { checkAudio, durationMs } from "./pcm.js";
import { type Utterance, UtteranceQueue } from "./utterances.js";

/** Agent audio that pauses this long ends the agent's utterance when its provider marks no turn end. */
const AGENT_TURN_GAP_MS = 700;

export interface LiteModeOptions {
  /**
   * The most client audio (ms) a session buffers ahead of its playout; a chunk past it is refused
   * (PIPELINE_LITE_MAX_BUFFERED_MS).
   */
  maxBufferedMs: number;
}

/**
 * LITE mode (contract section 6): the client streams the avatar's speech (`agent.speak` chunks up to
 * `agent.speak_end`), the server acknowledges every chunk and reports the utterance's playout in real
 * time (speak_started as soon as its first audio is buffered, speak_ended once it has played), an
 * interrupt drops everything buffered, and the avatar's state follows (idle, listening, talking).
 *
 * A session configured with a hosted agent or realtime model (vendorA/vendorD agent, vendorB/vendorC
 * realtime) also runs that conversation: the agent's audio plays as agent utterances with the same
 * events, and `user.audio` carries the caller's microphone to it.
 */
export function liteMode(
  providers: SessionProvidersFactory,
  options: LiteModeOptions,
  clock: Clock = systemClock,
): ModeFactory {
  return (ctx) => new LiteMode(ctx, providers, options, clock);
}

class LiteMode implements ModeHandler {
  readonly accepts: ReadonlySet<string>;
  private readonly state: AgentState;
  private readonly utterances: UtteranceQueue;
  private readonly link: ConversationLink | undefined;
  private readonly agentGap: Timer;
  private readonly hasVendorAAgent: boolean;
  /** user.audio before the agent is connected is dropped, with one warning. */
  private warnedNotConnected = false;

  constructor(
    private readonly ctx: SessionContext,
    providers: SessionProvidersFactory,
    private readonly options: LiteModeOptions,
    clock: Clock,
  ) {
    const lite = ctx.config.lite;
    this.hasVendorAAgent = Boolean(lite?.vendorAAgent);
    const hasConversation = Boolean(
      lite?.vendorAAgent || lite?.vendorDAgent || lite?.vendorBRealtime || lite?.vendorCRealtime,
    );
    this.accepts = hasConversation ? new Set([...LITE_CLIENT_EVENTS, "user.audio"]) : LITE_CLIENT_EVENTS;
    this.state = new AgentState((state, previous) =>
      ctx.send({ type: "agent.state_updated", state, previous_state: previous }),
    );
    // Each utterance is a turn for its latency: from its first audio to the moment it began to play.
    const turns = new WeakMap<Utterance, Turn>();
    const finishTurn = (u: Utterance, interrupted: boolean) => {
      turns.get(u)?.finish({ interrupted });
      turns.delete(u);
    };
    this.utterances = new UtteranceQueue(
      clock,
      {
        started: (u) => {
          const turn = ctx.turnMetrics.begin({
            trigger: u.source === "client" ? "agent.speak" : "agent",
            startedAt: u.firstAudioAt,
            sourceEventId: u.source === "client" ? u.id : null,
          });
          turn.mark("first_audio");
          turns.set(u, turn);
          ctx.send({ type: "agent.speak_started", sourceEventId: u.id });
        },
        ended: (u) => {
          ctx.send({ type: "agent.speak_ended", sourceEventId: u.id });
          finishTurn(u, false);
        },
        interrupted: (u) => {
          ctx.send({ type: "agent.speak_interrupted", sourceEventId: u.id });
          finishTurn(u, true);
        },
        talking: (on) => this.state.setTalking(on),
      },
      ctx.avatar,
    );
    this.agentGap = new Timer(clock);
    this.link = hasConversation
      ? new ConversationLink(
          ctx,
          providers(ctx),
          {
            audio: (pcm) => this.agentAudio(pcm),
            turnDone: () => this.agentTurnDone(),
            interrupted: () => this.clear(null),
          },
          this.hasVendorAAgent,
        )
      : undefined;
  }

  onConnected(_connectionId: string, firstTime: boolean): void {
    if (firstTime) void this.link?.start();
  }

  handle(event: ClientEvent): void {
    switch (event.type) {
      case "agent.speak":
        this.speak(event);
        break;
      case "agent.speak_end":
        this.speakEnd(event);
        break;
      case "agent.interrupt":
        this.link?.connected?.interrupt();
        this.clear(event.eventId);
        break;
      case "agent.start_listening":
        this.state.setListening(true);
        break;
      case "agent.stop_listening":
        this.state.setListening(false);
        break;
      case "vendorA_agent_command":
        this.agentCommand(event);
        break;
      case "user.audio":
        this.userAudio(event);
        break;
    }
  }

  async stop(): Promise<void> {
    this.agentGap.clear();
    this.utterances.dispose();
    this.link?.stop();
  }

  private speak(event: ClientEvent): void {
    const audio = checkAudio(event.payload.audio);
    if (!audio.ok) {
      this.refuse(event, "invalid_audio", `agent.speak: ${audio.message}`);
      return;
    }
    if (this.bufferFull(event, audio.pcm)) return;
    this.ctx.send({ type: "agent.audio_buffer_appended", sourceEventId: event.eventId });
    this.utterances.append("client", audio.pcm, () => event.eventId ?? crypto.randomUUID());
  }

  private speakEnd(event: ClientEvent): void {
    const trailing = event.payload.audio;
    if (trailing !== undefined && trailing !== null && trailing !== "") {
      const audio = checkAudio(trailing);
      // A bad trailing chunk refuses the whole event: the utterance stays open for a corrected one.
      if (!audio.ok) {
        this.refuse(event, "invalid_audio", `agent.speak_end: ${audio.message}`);
        return;
      }
      if (this.bufferFull(event, audio.pcm)) return;
      this.ctx.send({ type: "agent.audio_buffer_appended", sourceEventId: event.eventId });
      this.utterances.append("client", audio.pcm, () => event.eventId ?? crypto.randomUUID());
    }
    this.ctx.send({ type: "agent.audio_buffer_committed", sourceEventId: event.eventId });
    this.utterances.commit("client");
  }

  /**
   * Whether the chunk would take the audio waiting to play past the bound: a client that sends faster
   * than real time (a synthesizer's output passed on as it comes) gets ahead by as much, and no more.
   * The chunk is refused whole (no audio_buffer_appended), and the client may send it again as the
   * buffer plays.
   */
  private bufferFull(event: ClientEvent, pcm: Uint8Array): boolean {
    const buffered = this.utterances.bufferedMs;
    if (buffered + durationMs(pcm.length) <= this.options.maxBufferedMs) return false;
    this.refuse(
      event,
      "audio_buffer_full",
      `${event.type}: ${(buffered / 1000).toFixed(1)} s of audio wait to play, and a session buffers at most ${this.options.maxBufferedMs / 1000} s; send this chunk again as they play`,
    );
    return true;
  }

  /** Everything buffered goes: the playing utterance is interrupted, the buffer reported cleared. */
  private clear(sourceEventId: string | null): void {
    this.agentGap.clear();
    this.utterances.clear();
    this.ctx.send({ type: "agent.audio_buffer_cleared", sourceEventId });
  }

  private agentAudio(pcm: Uint8Array): void {
    this.utterances.append("agent", pcm, () => crypto.randomUUID());
    this.agentGap.arm(AGENT_TURN_GAP_MS, () => this.agentTurnDone());
  }

  private agentTurnDone(): void {
    this.agentGap.clear();
    this.utterances.commit("agent");
  }

  private agentCommand(event: ClientEvent): void {
    const eventType = event.payload.vendorA_event_type;
    const conversation = this.link?.connected;
    if (!this.hasVendorAAgent) {
      this.refuse(
        event,
        "no_vendorA_agent",
        "vendorA_agent_command needs a session with a vendorA agent (vendorA_agent_config)",
      );
    } else if (typeof eventType !== "string" || eventType === "") {
      this.refuse(event, "invalid_message", "vendorA_agent_command needs vendorA_event_type (a string)");
    } else if (!conversation?.sendRaw) {
      this.refuse(event, "agent_not_connected", "the vendorA agent is not connected");
    } else {
      conversation.sendRaw(eventType, event.payload.data ?? {});
    }
  }

  private userAudio(event: ClientEvent): void {
    const audio = checkAudio(event.payload.audio);
    if (!audio.ok) {
      this.refuse(event, "invalid_audio", `user.audio: ${audio.message}`);
      return;
    }
    const conversation = this.link?.connected;
    if (conversation) {
      this.warnedNotConnected = false;
      conversation.sendAudio(audio.pcm);
    } else if (!this.warnedNotConnected) {
      this.warnedNotConnected = true;
      this.ctx.sendWarning(
        "agent_not_connected",
        "user.audio dropped: the agent is not connected",
        event.eventId,
      );
    }
  }

  /** The event is not applied; its sender hears why. */
  private refuse(event: ClientEvent, type: string, message: string): void {
    this.ctx.sendError(type, message, event.eventId, event.connectionId);
  }
}
