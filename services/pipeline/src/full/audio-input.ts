/** The user's microphone audio of a `user.audio` event: base64 PCM, signed 16-bit little-endian, mono, 24 kHz. */

import { decodeStandardBase64 } from "../realtime/standard-base64.js";

export type DecodedAudio = { ok: true; pcm: Uint8Array } | { ok: false; problem: string };

export function decodeUserAudio(audio: unknown): DecodedAudio {
  if (typeof audio !== "string")
    return { ok: false, problem: "user.audio needs `audio`: base64 PCM (16-bit, 24 kHz, mono)" };
  const pcm = decodeStandardBase64(audio);
  if (!pcm) return { ok: false, problem: "user.audio `audio` is not valid base64" };
  if (pcm.length % 2 !== 0) {
    return {
      ok: false,
      problem: `user.audio \`audio\` must hold whole 16-bit samples (got ${pcm.length} bytes)`,
    };
  }
  return { ok: true, pcm };
}
