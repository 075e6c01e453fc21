import { SESSION_SAMPLE_RATE } from "@avatar/providers";
import type { Clock } from "../realtime/clock.js";

/** Time as the playout sees it: the realtime clock, and waiting on it. */
export interface PlayoutClock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

export function playoutClock(clock: Clock): PlayoutClock {
  return {
    now: () => clock.now(),
    wait: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => {
          cancel();
          reject(signal?.reason);
        };
        const cancel = clock.after(ms, () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        });
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
  };
}

/** How long PCM (16-bit mono at the session rate) takes to play. */
export function pcmDurationMs(bytes: number): number {
  return (bytes / 2 / SESSION_SAMPLE_RATE) * 1000;
}

/**
 * The timeline of one avatar turn's audio playing out in real time. Audio plays from the moment it is
 * pushed, or after the audio already queued; when synthesis falls behind, the gap is silence and the
 * timeline resumes with the next audio.
 */
export class Playout {
  private start: number | undefined;
  private end: number | undefined;

  constructor(private readonly clock: PlayoutClock) {}

  get started(): boolean {
    return this.start !== undefined;
  }

  /** When the audio queued so far will have played (undefined before any). */
  get endsAt(): number | undefined {
    return this.end;
  }

  /** Queues audio; answers when it will have played. */
  push(bytes: number): number {
    const now = this.clock.now();
    const from = Math.max(now, this.end ?? now);
    this.start ??= from;
    this.end = from + pcmDurationMs(bytes);
    return this.end;
  }

  /** Resolves once everything queued has played; rejects when the signal aborts first. */
  async drained(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const left = (this.end ?? 0) - this.clock.now();
      if (left <= 0) return;
      await this.clock.wait(left, signal);
    }
  }
}
