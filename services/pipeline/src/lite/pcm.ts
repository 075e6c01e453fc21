/** Session audio on the wire: base64 of PCM, signed 16-bit little-endian, mono, 24 kHz. */

import { decodeStandardBase64 } from "../realtime/standard-base64.js";

export const SAMPLE_RATE = 24_000;
const BYTES_PER_MS = (SAMPLE_RATE * 2) / 1000;

/** Audio that passed the checks: the samples' bytes (16-bit little-endian). */
export interface CheckedAudio {
  ok: true;
  pcm: Uint8Array;
}

export type AudioCheck = CheckedAudio | { ok: false; message: string };

/** Checks the `audio` field of an event and decodes it; the message of a refusal names the problem. */
export function checkAudio(value: unknown, field = "audio"): AudioCheck {
  if (typeof value !== "string") {
    return { ok: false, message: `${field} must be a base64 string of 16-bit PCM` };
  }
  if (value.length === 0) return { ok: false, message: `${field} is empty` };
  const pcm = decodeStandardBase64(value);
  if (!pcm) return { ok: false, message: `${field} is not valid base64` };
  if (pcm.length % 2 !== 0) {
    return {
      ok: false,
      message: `${field} has ${pcm.length} bytes: 16-bit PCM needs an even number (whole samples)`,
    };
  }
  return { ok: true, pcm };
}

/** How long `bytes` of session audio play. */
export const durationMs = (bytes: number): number => bytes / BYTES_PER_MS;
