/**
 * The last moments of the user's audio, by sample position, so recognition can start from where speech
 * really began: the voice-activity detector reports a start only after hearing enough of it.
 */
export class RecentAudio {
  private chunks: { at: number; pcm: Uint8Array }[] = [];
  private end = 0;

  constructor(private readonly keepSamples: number) {}

  /** Samples taken so far. */
  get position(): number {
    return this.end;
  }

  push(pcm: Uint8Array): void {
    this.chunks.push({ at: this.end, pcm });
    this.end += pcm.length / 2;
    const oldest = this.end - this.keepSamples;
    while (this.chunks.length > 1) {
      const first = this.chunks[0] as { at: number; pcm: Uint8Array };
      if (first.at + first.pcm.length / 2 > oldest) break;
      this.chunks.shift();
    }
  }

  /** The audio from sample `position` (or the oldest kept) to the latest. */
  since(position: number): Uint8Array {
    const parts: Uint8Array[] = [];
    for (const { at, pcm } of this.chunks) {
      const endAt = at + pcm.length / 2;
      if (endAt <= position) continue;
      parts.push(position > at ? pcm.subarray((position - at) * 2) : pcm);
    }
    return new Uint8Array(Buffer.concat(parts));
  }
}
