/**
 * Reads a RIFF/WAVE file holding 16-bit integer PCM. Walks the chunk list (fmt and data need not be
 * at fixed offsets; other chunks such as LIST are skipped, odd-sized chunks are padded) and mixes
 * several channels down to mono.
 */

export interface Pcm16Audio {
  sampleRate: number;
  /** Mono samples. */
  samples: Int16Array;
}

const PCM_FORMAT = 1;
const EXTENSIBLE_FORMAT = 0xfffe;

export function parseWav(bytes: Uint8Array): Pcm16Audio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || tag(bytes, 0) !== "RIFF" || tag(bytes, 8) !== "WAVE") {
    throw new Error("not a RIFF/WAVE file");
  }
  let format: { channels: number; sampleRate: number; bitsPerSample: number; formatTag: number } | undefined;
  let data: Uint8Array | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = tag(bytes, offset);
    const declared = view.getUint32(offset + 4, true);
    const start = offset + 8;
    // Writers that stream leave a placeholder size: take what the file holds.
    const size = Math.min(declared, bytes.length - start);
    if (id === "fmt ") {
      if (size < 16) throw new Error("fmt chunk too short");
      format = {
        formatTag: view.getUint16(start, true),
        channels: view.getUint16(start + 2, true),
        sampleRate: view.getUint32(start + 4, true),
        bitsPerSample: view.getUint16(start + 14, true),
      };
      if (format.formatTag === EXTENSIBLE_FORMAT && size >= 26)
        format.formatTag = view.getUint16(start + 24, true);
    } else if (id === "data") {
      data = bytes.subarray(start, start + size);
    }
    offset = start + size + (size % 2);
  }
  if (!format) throw new Error("WAVE file has no fmt chunk");
  if (!data) throw new Error("WAVE file has no data chunk");
  if (format.formatTag !== PCM_FORMAT || format.bitsPerSample !== 16) {
    throw new Error(`unsupported WAVE encoding (format ${format.formatTag}, ${format.bitsPerSample} bits)`);
  }
  if (format.channels < 1 || format.sampleRate < 1) throw new Error("invalid WAVE fmt chunk");
  return { sampleRate: format.sampleRate, samples: mixDown(data, format.channels) };
}

function mixDown(data: Uint8Array, channels: number): Int16Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const frames = Math.floor(data.length / (2 * channels));
  const samples = new Int16Array(frames);
  for (let frame = 0; frame < frames; frame++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += view.getInt16((frame * channels + c) * 2, true);
    samples[frame] = Math.round(sum / channels);
  }
  return samples;
}

function tag(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + 4));
}
