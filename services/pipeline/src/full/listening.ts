import { EnergyVad, type EnergyVadOptions, SESSION_SAMPLE_RATE } from "@avatar/providers";
import type { SessionProviders } from "../providers/session-providers.js";
import type { SessionContext } from "../realtime/mode.js";
import { RecentAudio } from "./recent-audio.js";
import type { TurnStart } from "./transcript.js";
import { UserUtterance } from "./user-utterance.js";

export interface ListeningHooks {
  /** The user started speaking (barge-in point). */
  speechStarted(): void;
  /** An utterance was recognized: its text (never empty), when it began, and when it ended and was recognized. */
  recognized(text: string, start: TurnStart, heard: Heard): void;
}

/** When the user's speech ended (as detected, or push-to-talk stopped) and when its text was known (epoch ms). */
export interface Heard {
  endedAt: number;
  transcribedAt: number;
}

/** Audio kept from before the detector's start report, so the first syllable reaches recognition. */
const PRE_ROLL_MS = 300;

/**
 * The user's side: utterances bounded by the energy VAD (conversational sessions) or by push-to-talk,
 * each with `user.speak_started` / `user.speak_ended`, sent through speech recognition, and
 * `user.transcription {text}` when its text is known.
 */
export class Listening {
  private readonly vad: EnergyVad;
  private readonly recent: RecentAudio;
  private current: UserUtterance | undefined;
  /** Utterances still being recognized (the current one and those finishing). */
  private readonly live = new Set<UserUtterance>();
  private checkedRecognizer = false;

  constructor(
    private readonly ctx: SessionContext,
    private readonly providers: SessionProviders,
    private readonly hooks: ListeningHooks,
    vadOptions: EnergyVadOptions = {},
  ) {
    this.vad = new EnergyVad(vadOptions);
    this.recent = new RecentAudio(
      Math.round(((PRE_ROLL_MS + (vadOptions.startMs ?? 100)) * SESSION_SAMPLE_RATE) / 1000),
    );
  }

  /** An utterance is open. */
  get speaking(): boolean {
    return this.current !== undefined;
  }

  /** Conversational audio: the detector decides where utterances begin and end. */
  detect(pcm: Uint8Array): void {
    this.firstAudio();
    // The detector and the recent audio see the same samples, so their positions agree.
    this.recent.push(pcm);
    this.current?.write(pcm);
    for (const event of this.vad.process(pcm)) {
      if (event.type === "speech_started") {
        this.begin();
        const from = event.sampleOffset - (PRE_ROLL_MS * SESSION_SAMPLE_RATE) / 1000;
        this.current?.write(this.recent.since(from));
      } else {
        this.end();
      }
    }
  }

  /** Push-to-talk audio: everything between start and stop is the utterance. */
  take(pcm: Uint8Array): void {
    this.firstAudio();
    this.current?.write(pcm);
  }

  begin(): void {
    if (this.current) return;
    this.current = new UserUtterance(this.ctx, this.providers);
    this.live.add(this.current);
    this.ctx.send({ type: "user.speak_started" });
    this.hooks.speechStarted();
  }

  end(): void {
    const utterance = this.current;
    if (!utterance) return;
    this.current = undefined;
    const endedAt = this.ctx.now();
    this.ctx.send({ type: "user.speak_ended" });
    void utterance.finish().then((text) => {
      if (!this.live.delete(utterance) || !text) return;
      this.ctx.send({ type: "user.transcription", text });
      this.hooks.recognized(text, utterance.start, { endedAt, transcribedAt: this.ctx.now() });
    });
  }

  /** Listening stopped: an open utterance ends unanswered. */
  drop(): void {
    this.vad.finish();
    const utterance = this.current;
    if (!utterance) return;
    this.current = undefined;
    this.live.delete(utterance);
    utterance.cancel();
    this.ctx.send({ type: "user.speak_ended" });
  }

  /** The session ends: nothing is sent after this. */
  stop(): void {
    for (const utterance of this.live) utterance.cancel();
    this.live.clear();
    this.current = undefined;
  }

  /** A session without speech recognition says so once, on the first user audio. */
  private firstAudio(): void {
    if (this.checkedRecognizer) return;
    this.checkedRecognizer = true;
    this.providers.recognizer().then(
      (recognizer) => {
        if (!recognizer) {
          this.ctx.sendWarning(
            "speech_recognition_unavailable",
            "no speech recognition is available for this session: user audio is not transcribed",
          );
        }
      },
      () => {
        // The utterance reports the failure when it tries to open a stream.
      },
    );
  }
}
