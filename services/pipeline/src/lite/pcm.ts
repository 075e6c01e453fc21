/** Session audio on the wire: base64 of PCM, signed 16-bit little-endian, mono, 24 kHz. */

export const SAMPLE_RATE = 24_000;
const BYTES_PER_MS = (SAMPLE_RATE * 2) / 1000;

/** Standard base64 with its padding; no whitespace, no URL-safe alphabet. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Audio that passed the checks; decoding waits until someone needs the samples. */
export interface CheckedAudio {
  ok: true;
  base64: string;
  bytes: number;
  ms: number;
}

export type AudioCheck = CheckedAudio | { ok: false; message: string };

/**
 * Checks the `audio` field of an event without decoding it (the LITE protocol needs only its length);
 * the message of a refusal names the problem.
 */
export function checkAudio(value: unknown, field = "audio"): AudioCheck {
  if (typeof value !== "string") {
    return { ok: false, message: `${field} must be a base64 string of 16-bit PCM` };
  }
  if (value.length === 0) return { ok: false, message: `${field} is empty` };
  if (!isBase64(value)) return { ok: false, message: `${field} is not valid base64` };
  const padding = value.endsWith("==") ? 2 : value.endsWith("=") ? 1 : 0;
  const bytes = (value.length / 4) * 3 - padding;
  if (bytes % 2 !== 0) {
    return {
      ok: false,
      message: `${field} has ${bytes} bytes: 16-bit PCM needs an even number (whole samples)`,
    };
  }
  return { ok: true, base64: value, bytes, ms: durationMs(bytes) };
}

/**
 * Whether `value` is standard padded base64. What a standard encoder writes is its own encoding again
 * after a decode, which Node does natively (~10 us for a second of audio, where the expression takes
 * ~300 us and was a tenth of a busy LITE worker); anything else goes to the expression.
 */
function isBase64(value: string): boolean {
  return Buffer.from(value, "base64").toString("base64") === value || BASE64.test(value);
}

/** The samples of checked audio. */
export function pcmOf(audio: CheckedAudio): Uint8Array {
  const pcm = Buffer.from(audio.base64, "base64");
  return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.length);
}

/** How long `bytes` of session audio play. */
export const durationMs = (bytes: number): number => bytes / BYTES_PER_MS;
