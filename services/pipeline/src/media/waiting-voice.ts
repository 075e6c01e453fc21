import type { PhonemeMark } from "@avatar/media";
import { SampleQueue } from "./sample-queue.js";

/** 24 kHz PCM: samples per millisecond. */
const SAMPLES_PER_MS = 24;

interface Chunk {
  /** When it starts playing (epoch ms). */
  at: number;
  /** How many samples it has; they are the next ones in the queue. */
  count: number;
  phonemes?: readonly PhonemeMark[];
  /** Its utterance's last chunk. */
  last: boolean;
}

/** What is left to play of the voice when the renderer takes over. */
export interface UnplayedChunk {
  samples: Int16Array;
  phonemes?: PhonemeMark[];
  last: boolean;
}

/**
 * The avatar's voice while nobody watches it yet: nothing is rendered, but the voice keeps playing out
 * in real time (a chunk plays after what is queued, or now), so that when the first viewer comes, the
 * renderer starts from what would be playing at that moment and the mouth matches the session's events.
 * The samples wait in one reused buffer (SampleQueue), not one per chunk.
 */
export class WaitingVoice {
  private chunks: Chunk[] = [];
  private readonly samples = new SampleQueue();

  constructor(private readonly now: () => number) {}

  /** Queues PCM bytes (16-bit little-endian, whole samples); they are copied. */
  push(pcm: Uint8Array, phonemes?: readonly PhonemeMark[]): void {
    const now = this.now();
    this.dropPlayed(now);
    const tail = this.chunks.at(-1);
    const at = Math.max(now, tail ? tail.at + tail.count / SAMPLES_PER_MS : now);
    const count = this.samples.push(pcm);
    this.chunks.push({ at, count, ...(phonemes ? { phonemes } : {}), last: false });
  }

  /** The utterance's last chunk has been pushed. */
  flush(): void {
    const tail = this.chunks.at(-1);
    if (tail) tail.last = true;
  }

  clear(): void {
    this.chunks = [];
    this.samples.clear();
  }

  /** Everything not yet played, the chunk playing now cut where it is; the queue is emptied. */
  takeUnplayed(): UnplayedChunk[] {
    const now = this.now();
    this.dropPlayed(now);
    let from = 0;
    const out = this.chunks.map((c) => {
      const played = Math.max(0, Math.min(c.count, Math.floor((now - c.at) * SAMPLES_PER_MS)));
      const shiftMs = played / SAMPLES_PER_MS;
      const phonemes = c.phonemes
        ?.filter((p) => p.startMs + p.durationMs > shiftMs)
        .map((p) => ({ ...p, startMs: Math.max(0, p.startMs - shiftMs) }));
      const samples = this.samples.copy(from + played, c.count - played);
      from += c.count;
      return { samples, ...(phonemes ? { phonemes } : {}), last: c.last };
    });
    this.clear();
    return out;
  }

  private dropPlayed(now: number): void {
    while (this.chunks.length > 0) {
      const head = this.chunks[0] as Chunk;
      if (head.at + head.count / SAMPLES_PER_MS > now) return;
      this.chunks.shift();
      this.samples.drop(head.count);
    }
  }
}
