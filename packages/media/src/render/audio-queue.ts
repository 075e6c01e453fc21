import { type Viseme, visemeOfPhoneme } from "../look/visemes.js";
import type { PhonemeMark } from "../video-generator.js";

/**
 * The voice waiting to be played, at 24 kHz, on one timeline of sample positions: a chunk goes right after
 * the audio queued before it, or at the playhead when nothing is queued. Phoneme marks are kept on the
 * same timeline, so the mouth can follow the text where it was synthesized.
 */

interface TimedViseme {
  start: number;
  end: number;
  viseme: Viseme;
}

export class AudioQueue {
  private chunks: Int16Array[] = [];
  /** Samples of chunks[0] already played. */
  private headOffset = 0;
  private queued = 0;
  /** Timeline position of the next sample to play. */
  private playhead = 0;
  private marks: TimedViseme[] = [];

  constructor(private readonly sampleRate: number) {}

  get queuedSamples(): number {
    return this.queued;
  }

  push(pcm: Int16Array, phonemes?: PhonemeMark[]): void {
    if (pcm.length === 0) return;
    const start = this.playhead + this.queued;
    this.chunks.push(pcm);
    this.queued += pcm.length;
    const perMs = this.sampleRate / 1000;
    for (const mark of phonemes ?? []) {
      if (!(mark.durationMs > 0)) continue;
      const begin = start + Math.round(mark.startMs * perMs);
      const end = Math.min(start + pcm.length, begin + Math.round(mark.durationMs * perMs));
      if (end > begin) this.marks.push({ start: begin, end, viseme: visemeOfPhoneme(mark.phoneme) });
    }
  }

  /** Fills `out` with the next samples (silence past the queued ones); answers how many were voice. */
  take(out: Int16Array): number {
    let filled = 0;
    while (filled < out.length && this.chunks.length > 0) {
      const chunk = this.chunks[0] as Int16Array;
      const n = Math.min(out.length - filled, chunk.length - this.headOffset);
      out.set(chunk.subarray(this.headOffset, this.headOffset + n), filled);
      filled += n;
      this.headOffset += n;
      if (this.headOffset === chunk.length) {
        this.chunks.shift();
        this.headOffset = 0;
      }
    }
    out.fill(0, filled);
    this.queued -= filled;
    this.playhead += filled;
    // Silence after the queue ran dry keeps the timeline in step with the frames.
    if (this.queued === 0) this.playhead += out.length - filled;
    this.dropMarksBefore(this.playhead - out.length);
    return filled;
  }

  /** The viseme marked over most of [from, to) (timeline positions), if any mark covers it. */
  markedViseme(from: number, to: number): Viseme | undefined {
    let best: Viseme | undefined;
    let bestOverlap = 0;
    for (const m of this.marks) {
      if (m.start >= to) break;
      const overlap = Math.min(to, m.end) - Math.max(from, m.start);
      if (overlap > bestOverlap) {
        bestOverlap = overlap;
        best = m.viseme;
      }
    }
    return best;
  }

  /** Timeline position of the next sample `take` will give. */
  get position(): number {
    return this.playhead;
  }

  /** Drops everything queued (interrupt). */
  clear(): void {
    this.playhead += this.queued;
    this.chunks = [];
    this.headOffset = 0;
    this.queued = 0;
    this.marks = [];
  }

  private dropMarksBefore(position: number): void {
    let i = 0;
    while (i < this.marks.length && (this.marks[i] as TimedViseme).end <= position) i++;
    if (i > 0) this.marks.splice(0, i);
  }
}
