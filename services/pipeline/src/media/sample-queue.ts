import { sampleCount, writeSamplesFromBytes } from "@avatar/providers";

/** One second of 24 kHz audio: the room a queue grows by. */
const STEP = 24_000;
const NONE = new Int16Array(0);
/** Room kept when the queue empties; more (a long burst queued at once) is given back then. */
const KEPT_WHEN_EMPTY = 10 * STEP;

/**
 * Samples waiting to play, first in first out, in one buffer that is reused: appended audio is copied in
 * and played audio gives its room back. A session's voice that nobody watches plays out for a second or
 * more per chunk; kept as one new ArrayBuffer per chunk, that audio outlived the young generation and V8
 * counts it towards its external-memory limit, and at 1,000 LITE sessions (48 MB/s of samples) that limit
 * started a mark-compact in the worker every ~1.2 s, with marking steps of up to 20 ms on its event loop
 * (`--trace-incremental-marking`, pnpm bench:lite).
 */
export class SampleQueue {
  /** No room until the first audio: a session whose voice is watched, or that has not spoken, keeps none. */
  #data: Int16Array = NONE;
  /** Index in #data of the first queued sample. */
  #head = 0;
  #length = 0;
  readonly #allocate: (samples: number) => Int16Array;

  /** `allocate` makes each new buffer (a test counts them). */
  constructor(allocate: (samples: number) => Int16Array = (samples) => new Int16Array(samples)) {
    this.#allocate = allocate;
  }

  /** Samples queued. */
  get length(): number {
    return this.#length;
  }

  /** Samples the buffer has room for. */
  get capacity(): number {
    return this.#data.length;
  }

  /** Appends PCM bytes (16-bit little-endian, whole samples); answers how many samples they were. */
  push(pcm: Uint8Array): number {
    const count = sampleCount(pcm);
    this.#makeRoom(count);
    writeSamplesFromBytes(pcm, this.#data, this.#head + this.#length);
    this.#length += count;
    return count;
  }

  /** Forgets the first `count` samples (all of them when fewer are queued). */
  drop(count: number): void {
    const dropped = Math.min(Math.max(0, count), this.#length);
    this.#head += dropped;
    this.#length -= dropped;
    if (this.#length === 0) this.clear();
  }

  /** A copy of `count` queued samples from position `from` (0 is the first queued), cut to what is queued. */
  copy(from: number, count: number): Int16Array {
    const start = this.#head + Math.min(Math.max(0, from), this.#length);
    const end = Math.min(start + Math.max(0, count), this.#head + this.#length);
    return this.#data.slice(start, end);
  }

  clear(): void {
    this.#head = 0;
    this.#length = 0;
    if (this.#data.length > KEPT_WHEN_EMPTY) this.#data = NONE;
  }

  /** Room for `count` more at the end: the queued samples move to the front, or to a larger buffer. */
  #makeRoom(count: number): void {
    if (this.#head + this.#length + count <= this.#data.length) return;
    const needed = this.#length + count;
    if (needed <= this.#data.length) {
      this.#data.copyWithin(0, this.#head, this.#head + this.#length);
    } else {
      const larger = this.#allocate(Math.ceil(needed / STEP) * STEP);
      larger.set(this.#data.subarray(this.#head, this.#head + this.#length));
      this.#data = larger;
    }
    this.#head = 0;
  }
}
