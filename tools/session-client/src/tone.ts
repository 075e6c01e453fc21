/** `ms` of a 24 kHz mono 16-bit PCM tone (what LITE's agent.speak carries), as raw bytes. */
export function tone(ms: number, hz = 220): Buffer {
  const samples = Math.round(ms * 24);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    pcm.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * hz * i) / 24_000)), i * 2);
  return pcm;
}
