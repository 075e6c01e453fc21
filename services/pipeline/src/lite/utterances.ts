import type { AvatarOutput } from "../media/avatar-output.js";
import { type Clock, Timer } from "../realtime/clock.js";
import { durationMs } from "./pcm.js";
import { PlayoutClock } from "./playout-clock.js";

/** Who produces an utterance's audio: the client (`agent.speak`) or the session's agent/realtime model. */
export type Source = "client" | "agent";

export interface Utterance {
  /** The event_id of its first chunk (or a generated id). */
  readonly id: string;
  readonly source: Source;
  /** When its first audio arrived (epoch ms). */
  readonly firstAudioAt: number;
  /** Audio buffered before it started playing, ms. */
  queuedMs: number;
  /** Audio that arrived before it started playing; handed to the avatar's media when it starts. */
  waiting: Uint8Array[];
  /** Its last audio arrived (speak_end): it ends once that has played. */
  committed: boolean;
  /** When it was committed (epoch ms). */
  committedAt: number;
  started: boolean;
}

export interface UtteranceListener {
  started(u: Utterance): void;
  ended(u: Utterance): void;
  interrupted(u: Utterance): void;
  /** Whether an utterance is playing, reported after each step when it changed. */
  talking(on: boolean): void;
}

/**
 * The avatar's speech, one utterance after another. Chunks of a source go to its open utterance (a new
 * one when it has none) until that source commits it. Only the head of the queue plays: it starts as
 * soon as it has audio and the one before it has ended, plays out in real time on a PlayoutClock, and
 * ends when it is committed and everything buffered has played. The next one starts where it ended
 * (gapless) or when its audio arrives, whichever is later. The avatar's media gets each utterance's
 * audio as it plays: what was buffered when it starts, then each chunk as it arrives.
 */
export class UtteranceQueue {
  private readonly queue: Utterance[] = [];
  private readonly open = new Map<Source, Utterance>();
  private readonly playout: PlayoutClock;
  private readonly endTimer: Timer;
  private lastEnd = Number.NEGATIVE_INFINITY;
  private wasTalking = false;

  constructor(
    private readonly clock: Clock,
    private readonly listener: UtteranceListener,
    private readonly output: AvatarOutput,
  ) {
    this.playout = new PlayoutClock(() => clock.now());
    this.endTimer = new Timer(clock);
  }

  get talking(): boolean {
    return this.queue[0]?.started ?? false;
  }

  /** Audio buffered and not yet played, ms: what the playing utterance has left, and the queued ones'. */
  get bufferedMs(): number {
    let ms = 0;
    for (const u of this.queue) ms += u.started ? this.playout.remainingMs : u.queuedMs;
    return ms;
  }

  /** The utterance `source` is adding to, if any. */
  openUtterance(source: Source): Utterance | undefined {
    return this.open.get(source);
  }

  /** A chunk of PCM from `source`; `newId` names the utterance when the chunk opens one. */
  append(source: Source, pcm: Uint8Array, newId: () => string): Utterance {
    const ms = durationMs(pcm.length);
    let u = this.open.get(source);
    if (!u) {
      u = {
        id: newId(),
        source,
        firstAudioAt: this.clock.now(),
        queuedMs: 0,
        waiting: [],
        committed: false,
        committedAt: 0,
        started: false,
      };
      this.open.set(source, u);
      this.queue.push(u);
    }
    if (u.started) {
      this.playout.append(ms);
      this.output.speak(pcm);
    } else {
      u.queuedMs += ms;
      u.waiting.push(pcm);
    }
    this.step();
    return u;
  }

  /** `source` has sent its utterance's last audio; answers the utterance, if one was open. */
  commit(source: Source): Utterance | undefined {
    const u = this.open.get(source);
    if (!u) return undefined;
    this.open.delete(source);
    u.committed = true;
    u.committedAt = this.clock.now();
    if (u.started) this.output.endUtterance();
    this.step();
    return u;
  }

  /** Drops all buffered audio: the playing utterance is interrupted, queued ones are discarded. */
  clear(): Utterance[] {
    const stopped = this.queue.filter((u) => u.started);
    if (stopped.length > 0) this.output.interrupt();
    this.queue.length = 0;
    this.open.clear();
    this.endTimer.clear();
    for (const u of stopped) this.listener.interrupted(u);
    this.lastEnd = this.clock.now();
    this.reportTalking();
    return stopped;
  }

  /** Stops the timer without a word (the session is over). */
  dispose(): void {
    this.endTimer.clear();
    this.queue.length = 0;
    this.open.clear();
  }

  private step(): void {
    const head = this.queue[0];
    if (head && !head.started) {
      head.started = true;
      this.playout.begin(Math.max(this.lastEnd, head.firstAudioAt), head.queuedMs);
      for (const pcm of head.waiting.splice(0)) this.output.speak(pcm);
      if (head.committed) this.output.endUtterance();
      this.listener.started(head);
    }
    if (head?.committed) {
      this.endTimer.arm(Math.max(0, this.playout.endsAt - this.clock.now()), () => this.finishHead());
    }
    this.reportTalking();
  }

  private finishHead(): void {
    const head = this.queue.shift();
    if (!head) return;
    // It ended when its audio had played, or when it was committed after a stall, whichever was later.
    this.lastEnd = Math.max(this.playout.endsAt, head.committedAt);
    this.listener.ended(head);
    this.step();
  }

  private reportTalking(): void {
    const now = this.talking;
    if (now === this.wasTalking) return;
    this.wasTalking = now;
    this.listener.talking(now);
  }
}
