/** Measures for checking resampled audio: the samples of PCM bytes and how often a tone crosses zero. */
import { samplesFromBytes } from "../../src/audio/pcm.js";

/** Sign changes per second: twice the frequency of a pure tone. */
export function zeroCrossingRate(pcm: Uint8Array, rate: number): number {
  const samples = samplesFromBytes(pcm);
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) {
    if ((samples[i - 1] as number) < 0 !== (samples[i] as number) < 0) crossings += 1;
  }
  return (crossings * rate) / samples.length;
}
