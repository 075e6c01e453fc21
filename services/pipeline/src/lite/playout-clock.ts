/**
 * The playout of one utterance in real time. Playback starts at `begin` with what is buffered by then;
 * each later chunk plays right after the audio before it, or from the moment it arrives when the buffer
 * had run dry (an underrun stalls playback, it does not skip ahead).
 */
export class PlayoutClock {
  private until = 0;

  constructor(private readonly now: () => number) {}

  /** Playback starts at `at` (epoch ms) with `bufferedMs` of audio ready. */
  begin(at: number, bufferedMs: number): void {
    this.until = at + bufferedMs;
  }

  /** A chunk of `ms` arrives now. */
  append(ms: number): void {
    this.until = Math.max(this.now(), this.until) + ms;
  }

  /** When everything buffered so far has played (epoch ms). */
  get endsAt(): number {
    return this.until;
  }

  /** Audio buffered and not yet played, in ms. */
  get remainingMs(): number {
    return Math.max(0, this.until - this.now());
  }
}
