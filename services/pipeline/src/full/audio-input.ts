/** The user's microphone audio of a `user.audio` event: base64 PCM, signed 16-bit little-endian, mono, 24 kHz. */

export type DecodedAudio = { ok: true; pcm: Uint8Array } | { ok: false; problem: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function decodeUserAudio(audio: unknown): DecodedAudio {
  if (typeof audio !== "string")
    return { ok: false, problem: "user.audio needs `audio`: base64 PCM (16-bit, 24 kHz, mono)" };
  if (audio.length % 4 !== 0 || !BASE64.test(audio))
    return { ok: false, problem: "user.audio `audio` is not valid base64" };
  const bytes = Buffer.from(audio, "base64");
  if (bytes.length % 2 !== 0) {
    return {
      ok: false,
      problem: `user.audio \`audio\` must hold whole 16-bit samples (got ${bytes.length} bytes)`,
    };
  }
  return { ok: true, pcm: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
