import { turnLatency } from "@avatar/runtime";
import type { JsonObject } from "@bufbuild/protobuf";
import type { ServerEventInput } from "./mode.js";

/**
 * Per-turn latency (`session.turn_metrics`). A turn starts at its reference point: the end of the
 * user's speech for an answer to what the user said (as the voice-activity detector or push-to-talk
 * declared it), the arrival of the client event for `avatar.say` / `avatar.repeat` and the like, the
 * first connect for the opening text, the first `agent.speak` chunk (or the agent's first audio) for a
 * LITE utterance. Each stage is measured from that point, in milliseconds:
 *
 * - `final_transcript`: the user's utterance was recognized (`user.transcription`);
 * - `first_llm_token`: the language model's first piece of the answer;
 * - `first_audio`: the first synthesized audio of the turn began to play (LITE: its audio began to play);
 * - `first_mouth_open_frame`: the first video frame showing the mouth open (only when the session renders
 *   video: the media code reports frames through `videoFrame`).
 *
 * A stage that does not apply or was not reached is null. When the turn ends (played out, interrupted,
 * or failed) the event goes to the client, is stored among the session's events, and each measured
 * stage is observed in `avatar_turn_latency_seconds{mode, stage}`.
 */

export const TURN_METRICS_EVENT = "session.turn_metrics";

export const TURN_STAGES = [
  "final_transcript",
  "first_llm_token",
  "first_audio",
  "first_mouth_open_frame",
] as const;
export type TurnStage = (typeof TURN_STAGES)[number];

/** How open the mouth must be (AvFrame.mouthOpen, 0 to 1) for a frame to count as "mouth open". */
export const MOUTH_OPEN_MIN = 0.1;

/**
 * What started a turn: `user_speech`, `opening_text`, the FULL client event (`avatar.say`,
 * `avatar.speak_response`, `avatar.repeat`, `avatar.speak_text`), or in LITE `agent.speak` (the client's
 * audio) or `agent` (the session's hosted agent or realtime model).
 */
export type TurnTrigger = string;

export interface TurnMetricsDeps {
  mode: "FULL" | "LITE";
  /** Milliseconds since the Unix epoch (the session's clock). */
  now(): number;
  send(event: ServerEventInput): void;
  /** Keeps the event among the session's stored events (idempotent by id). */
  store(event: { id: string; type: string; payload: JsonObject }): void;
}

export class TurnMetrics {
  /** The turn whose audio plays now: the next mouth-open frame belongs to it. */
  private playing: Turn | undefined;

  constructor(private readonly deps: TurnMetricsDeps) {}

  /** A turn begins; `startedAt` is its reference point (epoch ms). */
  begin(options: { trigger: TurnTrigger; startedAt?: number; sourceEventId?: string | null }): Turn {
    return new Turn(this, this.deps, {
      trigger: options.trigger,
      startedAt: options.startedAt ?? this.deps.now(),
      sourceEventId: options.sourceEventId ?? null,
    });
  }

  /**
   * The media code calls this for every video frame it renders (or at least every frame whose mouth is
   * open): `at` is the frame's presentation time on the session clock (AvFrame.at), `mouthOpen` how open
   * the drawn mouth is (AvFrame.mouthOpen). The first open-mouthed frame that begins at or after a turn's first audio
   * completes that turn's `first_mouth_open_frame`. Cheap enough for every frame.
   */
  videoFrame(frame: { at: number; mouthOpen: number }): void {
    const turn = this.playing;
    if (!turn || frame.mouthOpen < MOUTH_OPEN_MIN) return;
    const audioAt = turn.at("first_audio");
    // A frame that began before the audio did may still show the previous turn's mouth.
    if (audioAt === undefined || frame.at < audioAt) return;
    turn.mark("first_mouth_open_frame", frame.at);
    this.playing = undefined;
  }

  /** @internal A turn's audio began to play. */
  audioStarted(turn: Turn): void {
    this.playing = turn;
  }

  /** @internal A turn ended. */
  ended(turn: Turn): void {
    if (this.playing === turn) this.playing = undefined;
  }
}

export class Turn {
  readonly id = crypto.randomUUID();
  private readonly marks = new Map<TurnStage, number>();
  private done = false;

  constructor(
    private readonly recorder: TurnMetrics,
    private readonly deps: TurnMetricsDeps,
    private readonly info: { trigger: TurnTrigger; startedAt: number; sourceEventId: string | null },
  ) {}

  /** When a stage was reached (epoch ms), if it was. */
  at(stage: TurnStage): number | undefined {
    return this.marks.get(stage);
  }

  /** Records a stage the first time it is reached (later marks of the same stage are ignored). */
  mark(stage: TurnStage, at: number = this.deps.now()): void {
    if (this.done || this.marks.has(stage)) return;
    this.marks.set(stage, at);
    if (stage === "first_audio") this.recorder.audioStarted(this);
  }

  /** The turn is over: the event goes out (once). */
  finish(outcome: { interrupted: boolean }): void {
    if (this.done) return;
    this.done = true;
    this.recorder.ended(this);
    const latency: Record<TurnStage, number | null> = {
      final_transcript: null,
      first_llm_token: null,
      first_audio: null,
      first_mouth_open_frame: null,
    };
    for (const stage of TURN_STAGES) {
      const at = this.marks.get(stage);
      if (at === undefined) continue;
      const ms = Math.max(0, Math.round(at - this.info.startedAt));
      latency[stage] = ms;
      turnLatency.observe({ mode: this.deps.mode, stage }, ms / 1000);
    }
    const payload = {
      turn_id: this.id,
      trigger: this.info.trigger,
      interrupted: outcome.interrupted,
      started_at: Math.round(this.info.startedAt),
      latency_ms: latency,
    };
    this.deps.send({ type: TURN_METRICS_EVENT, sourceEventId: this.info.sourceEventId, ...payload });
    this.deps.store({
      id: this.id,
      type: TURN_METRICS_EVENT,
      payload: { source_event_id: this.info.sourceEventId, ...payload },
    });
  }
}
