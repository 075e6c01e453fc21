/**
 * Conversions between little-endian 16-bit PCM bytes and samples (independent of the host's byte order).
 * On a little-endian host (x64, arm64) the bytes already are the samples' memory and are copied as they
 * are: a second of session audio is 24,000 samples, and converting them one by one was a visible part of
 * a busy LITE worker's time. The copy keeps the result independent of the caller's buffer.
 */

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function samplesFromBytes(bytes: Uint8Array, littleEndianHost = LITTLE_ENDIAN_HOST): Int16Array {
  const samples = new Int16Array(sampleCount(bytes));
  writeSamplesFromBytes(bytes, samples, 0, littleEndianHost);
  return samples;
}

/** Writes the samples of `bytes` into `target` from index `at`, which must have room for them. */
export function writeSamplesFromBytes(
  bytes: Uint8Array,
  target: Int16Array,
  at: number,
  littleEndianHost = LITTLE_ENDIAN_HOST,
): void {
  const count = sampleCount(bytes);
  if (at < 0 || at + count > target.length) {
    throw new RangeError(`${count} samples do not fit at ${at} in ${target.length}`);
  }
  if (littleEndianHost) {
    new Uint8Array(target.buffer, target.byteOffset + at * 2, bytes.length).set(bytes);
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < count; i++) target[at + i] = view.getInt16(i * 2, true);
}

/** How many samples `bytes` of 16-bit PCM hold; a RangeError when they end in half a sample. */
export function sampleCount(bytes: Uint8Array): number {
  if (bytes.length % 2 !== 0)
    throw new RangeError(`16-bit PCM needs an even byte count (got ${bytes.length})`);
  return bytes.length / 2;
}

export function bytesFromSamples(samples: Int16Array, littleEndianHost = LITTLE_ENDIAN_HOST): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  if (littleEndianHost) {
    bytes.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
    return bytes;
  }
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i] as number, true);
  return bytes;
}

/**
 * Re-cuts a byte stream of 16-bit PCM so every piece holds whole samples: providers may split a
 * sample across two frames. A dangling byte is carried into the next piece.
 */
export class SampleAligner {
  private carry: number | undefined;

  /** The whole samples available so far (possibly empty). */
  push(bytes: Uint8Array): Uint8Array {
    let input = bytes;
    if (this.carry !== undefined && bytes.length > 0) {
      input = new Uint8Array(bytes.length + 1);
      input[0] = this.carry;
      input.set(bytes, 1);
      this.carry = undefined;
    }
    if (input.length % 2 === 0) return input;
    this.carry = input[input.length - 1];
    return input.subarray(0, input.length - 1);
  }

  /** True when half a sample is still waiting for its other byte. */
  get pending(): boolean {
    return this.carry !== undefined;
  }
}
