/**
 * Regroups a PCM stream into frames between a minimum and a maximum size, for protocols that refuse
 * frames that are too short or too long. Sizes are in bytes and must be even (whole 16-bit samples).
 */
export class AudioBatcher {
  private pending: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly minBytes: number,
    private readonly maxBytes: number,
  ) {
    if (minBytes % 2 !== 0 || maxBytes % 2 !== 0 || minBytes <= 0 || maxBytes < minBytes) {
      throw new RangeError("frame sizes must be even, positive and min <= max");
    }
  }

  /** The frames ready to send (possibly none); the rest waits for more audio. */
  push(pcm: Uint8Array): Uint8Array[] {
    let buffer = this.pending.length === 0 ? pcm : concat(this.pending, pcm);
    const frames: Uint8Array[] = [];
    while (buffer.length >= this.minBytes) {
      const size = Math.min(buffer.length - (buffer.length % 2), this.maxBytes);
      frames.push(buffer.slice(0, size));
      buffer = buffer.subarray(size);
    }
    this.pending = buffer.slice();
    return frames;
  }

  /** What is left, padded with silence to the minimum size; undefined when nothing is left. */
  flush(): Uint8Array | undefined {
    if (this.pending.length === 0) return undefined;
    const frame = new Uint8Array(Math.max(this.minBytes, this.pending.length));
    frame.set(this.pending);
    this.pending = new Uint8Array(0);
    return frame;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
