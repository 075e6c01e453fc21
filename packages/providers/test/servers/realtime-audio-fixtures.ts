/** Test audio: PCM 16-bit little-endian mono tones and silence, and a loudness measure. */

export function tone(rate: number, ms: number, frequency = 300, amplitude = 8_000): Uint8Array {
  const count = Math.round((rate * ms) / 1000);
  const bytes = new Uint8Array(count * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < count; i++) {
    view.setInt16(i * 2, Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / rate)), true);
  }
  return bytes;
}

export function silence(rate: number, ms: number): Uint8Array {
  return new Uint8Array(Math.round((rate * ms) / 1000) * 2);
}

export function rms(pcm: Uint8Array): number {
  const view = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const count = Math.floor(pcm.length / 2);
  let sum = 0;
  for (let i = 0; i < count; i++) sum += view.getInt16(i * 2, true) ** 2;
  return count ? Math.sqrt(sum / count) : 0;
}

/** Cuts audio into chunks of `ms` milliseconds, the way a client streams it. */
export function chunks(pcm: Uint8Array, rate: number, ms: number): Uint8Array[] {
  const size = Math.round((rate * ms) / 1000) * 2;
  const out: Uint8Array[] = [];
  for (let offset = 0; offset < pcm.length; offset += size) out.push(pcm.subarray(offset, offset + size));
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** Strict base64 (what the vendors accept): the right alphabet and padding. */
export function isBase64(text: unknown): text is string {
  return typeof text === "string" && text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}
