/** Conversions between little-endian 16-bit PCM bytes and samples (independent of the host's byte order). */

export function samplesFromBytes(bytes: Uint8Array): Int16Array {
  if (bytes.length % 2 !== 0)
    throw new RangeError(`16-bit PCM needs an even byte count (got ${bytes.length})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Int16Array(bytes.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

export function bytesFromSamples(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
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
