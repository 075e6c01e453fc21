import type { EnergyVadOptions } from "@avatar/providers";
import type { Clients } from "@avatar/runtime";
import type { SessionProviders } from "../providers/session-providers.js";
import { type Clock, systemClock } from "../realtime/clock.js";
import { FULL_CLIENT_EVENTS } from "../realtime/event-types.js";
import type { ClientEvent, ModeHandler, SessionContext } from "../realtime/mode.js";
import { AgentState } from "./agent-state.js";
import { decodeUserAudio } from "./audio-input.js";
import { runTurn, type TurnRequest } from "./avatar-turn.js";
import { Conversation } from "./conversation.js";
import { type Heard, Listening } from "./listening.js";
import { playoutClock } from "./playout.js";
import { PushToTalk } from "./push-to-talk.js";
import { type TurnStart, writeTurn } from "./transcript.js";
import { AvatarTurns } from "./turns.js";

export interface FullModeOptions {
  vad?: EnergyVadOptions;
  /** Conversation messages kept for the language model. */
  maxHistory?: number;
  /** The realtime clock the avatar's audio plays out on (default: the session's clock, real timers). */
  clock?: Clock;
}

/**
 * A FULL session: the user's audio through voice-activity detection (or push-to-talk) and speech
 * recognition, answers from the language model, the avatar's speech synthesized and played out in real
 * time, barge-in, and the transcript of what was actually said.
 */
export class FullMode implements ModeHandler {
  readonly accepts = FULL_CLIENT_EVENTS;
  private readonly state: AgentState;
  private readonly conversation: Conversation;
  private readonly turns: AvatarTurns;
  private readonly listening: Listening;
  private readonly ptt: PushToTalk;
  private listenEnabled = true;
  private talking = false;
  private stopped = false;

  constructor(
    private readonly ctx: SessionContext,
    private readonly providers: SessionProviders,
    memory: Clients["memory"],
    options: FullModeOptions = {},
  ) {
    this.state = new AgentState(ctx);
    this.conversation = new Conversation(ctx, providers, memory, options.maxHistory);
    this.ptt = new PushToTalk(ctx);
    const clock = playoutClock(options.clock ?? { now: () => ctx.now(), after: systemClock.after });
    this.turns = new AvatarTurns(
      (request, signal) =>
        runTurn(
          {
            ctx,
            providers,
            conversation: this.conversation,
            clock,
            onTalking: (talking) => {
              this.talking = talking;
              this.refreshState();
            },
            mayEmit: () => !this.stopped,
          },
          request,
          signal,
        ),
      ctx.log,
    );
    this.listening = new Listening(
      ctx,
      providers,
      {
        speechStarted: () => this.turns.interrupt("barge-in"),
        recognized: (text, start, heard) => this.userSaid(text, start, heard),
      },
      options.vad,
    );
  }

  onConnected(connectionId: string, firstTime: boolean): void {
    if (this.stopped) return;
    if (!firstTime) {
      this.state.announce(connectionId);
      return;
    }
    this.refreshState();
    this.prepare();
    const opening = this.ctx.config.openingText.trim();
    if (opening) {
      this.turns.enqueue({
        kind: "speak",
        text: opening,
        sourceEventId: null,
        origin: { trigger: "opening_text", at: this.ctx.now() },
      });
    }
  }

  handle(event: ClientEvent): void {
    if (this.stopped) return;
    const { type, eventId } = event;
    switch (type) {
      case "user.audio":
        this.userAudio(event);
        return;
      case "avatar.repeat":
      case "avatar.speak_text":
      case "avatar.say":
      case "avatar.speak_response":
        this.avatarText(event);
        return;
      case "avatar.interrupt":
        this.turns.interrupt();
        return;
      case "avatar.start_listening":
        this.setListening(true);
        return;
      case "avatar.stop_listening":
        this.setListening(false);
        return;
      case "user.start_push_to_talk":
        if (this.ptt.start(eventId)) {
          this.listening.begin();
          this.refreshState();
        }
        return;
      case "user.stop_push_to_talk":
        if (this.ptt.stop(eventId)) {
          this.listening.end();
          this.refreshState();
        }
        return;
      default:
        this.ctx.sendError(
          "invalid_event",
          `${type} is not an event of a FULL session`,
          eventId,
          event.connectionId,
        );
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.listening.stop();
    await this.turns.stop();
  }

  /**
   * Chooses the providers and reads the memory while the client settles in, so the first turn does not
   * wait for it. A failure here is reported by the turn that needs the provider.
   */
  private prepare(): void {
    this.providers.synthesizer().catch(() => {});
    this.providers.languageModel().catch(() => {});
    this.conversation.prefetch();
  }

  private userAudio(event: ClientEvent): void {
    const audio = decodeUserAudio(event.payload.audio);
    if (!audio.ok) {
      this.ctx.sendError("invalid_audio", audio.problem, event.eventId, event.connectionId);
      return;
    }
    if (audio.pcm.length === 0 || !this.listenEnabled) return;
    if (!this.ptt.enabled) this.listening.detect(audio.pcm);
    else if (this.ptt.active) this.listening.take(audio.pcm);
  }

  private avatarText(event: ClientEvent): void {
    const text = event.payload.text;
    if (typeof text !== "string" || !text.trim()) {
      this.ctx.sendError(
        "invalid_event",
        `${event.type} needs a non-empty \`text\``,
        event.eventId,
        event.connectionId,
      );
      return;
    }
    const origin = { trigger: event.type, at: this.ctx.now() };
    const request: TurnRequest =
      event.type === "avatar.repeat" || event.type === "avatar.speak_text"
        ? { kind: "speak", text, sourceEventId: event.eventId, origin }
        : { kind: "answer", userText: text, sourceEventId: event.eventId, origin };
    this.turns.enqueue(request);
  }

  /** A recognized utterance: written and remembered; answered unless the user has already gone on speaking. */
  private userSaid(text: string, start: TurnStart, heard: Heard): void {
    if (this.stopped) return;
    writeTurn(this.ctx, "user", text, start);
    this.conversation.addUser(text);
    if (!this.listening.speaking) {
      this.turns.enqueue({
        kind: "answer",
        sourceEventId: null,
        origin: { trigger: "user_speech", at: heard.endedAt, transcribedAt: heard.transcribedAt },
      });
    }
  }

  private setListening(enabled: boolean): void {
    this.listenEnabled = enabled;
    if (!enabled && !this.ptt.enabled) this.listening.drop();
    this.refreshState();
  }

  private refreshState(): void {
    if (this.stopped) return;
    const listening = this.listenEnabled && (!this.ptt.enabled || this.ptt.active);
    this.state.update({ talking: this.talking, listening });
  }
}
