/**
 * A SYNTHETIC test source, not the avatar: a grey frame with a block sliding across it and, while a
 * 440 Hz tone plays (0.4 s out of every 1.2 s), a white "mouth" patch in the lower middle. Tests and
 * benchmarks use it while the renderer is built elsewhere; the tone and the patch start and stop on the
 * same frame, so a receiver can measure how far audio and video drift apart.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type AvFrame, FRAME_MS, i420Size, MEDIA_SAMPLE_RATE, SAMPLES_PER_FRAME } from "../frames.js";

export interface SyntheticOptions {
  width: number;
  height: number;
  /** Frames to yield; unbounded when absent. */
  count?: number;
  /** Pace frames in real time (every FRAME_MS) as a renderer does; otherwise as fast as consumed. */
  realtime?: boolean;
  signal?: AbortSignal;
  /** Tone period and length, in frames. */
  cycleFrames?: number;
  toneFrames?: number;
  now?: () => number;
}

/** Whether the synthetic source "speaks" on frame `index`. */
export const syntheticSpeaking = (index: number, cycleFrames = 30, toneFrames = 10): boolean =>
  index % cycleFrames < toneFrames;

/** The region holding the synthetic mouth patch (for receivers measuring it). */
export function syntheticMouthRegion(width: number, height: number) {
  const w = Math.max(16, Math.floor(width / 8) & ~1);
  const h = Math.max(16, Math.floor(height / 8) & ~1);
  return { x: Math.floor((width - w) / 2) & ~1, y: Math.floor(height * 0.7) & ~1, w, h };
}

/** One synthetic frame (deterministic for its index). */
export function syntheticFrame(index: number, options: SyntheticOptions, at: number): AvFrame {
  const { width, height } = options;
  const data = new Uint8Array(i420Size(width, height));
  data.fill(90, 0, width * height);
  data.fill(128, width * height);
  const block = Math.max(16, Math.floor(height / 10));
  const bx = (index * 8) % Math.max(1, width - block);
  const by = Math.floor(height / 4);
  for (let y = by; y < by + block; y++) data.fill(200, y * width + bx, y * width + bx + block);
  const speaking = syntheticSpeaking(index, options.cycleFrames, options.toneFrames);
  const mouth = syntheticMouthRegion(width, height);
  for (let y = mouth.y; y < mouth.y + mouth.h; y++) {
    data.fill(speaking ? 235 : 30, y * width + mouth.x, y * width + mouth.x + mouth.w);
  }
  const audio = new Int16Array(SAMPLES_PER_FRAME);
  if (speaking) {
    const first = index * SAMPLES_PER_FRAME;
    for (let i = 0; i < audio.length; i++) {
      audio[i] = Math.round(12_000 * Math.sin((2 * Math.PI * 440 * (first + i)) / MEDIA_SAMPLE_RATE));
    }
  }
  return { index, at, video: { width, height, data }, audio, mouthOpen: speaking ? 1 : 0, speaking };
}

/** Synthetic frames, paced in real time when asked. */
export async function* syntheticFrames(options: SyntheticOptions): AsyncGenerator<AvFrame> {
  const now = options.now ?? Date.now;
  const start = now();
  for (let index = 0; options.count === undefined || index < options.count; index++) {
    if (options.signal?.aborted) return;
    const at = start + index * FRAME_MS;
    if (options.realtime) {
      const wait = at - now();
      if (wait > 0) await sleep(wait, undefined, { signal: options.signal }).catch(() => {});
      if (options.signal?.aborted) return;
    }
    yield syntheticFrame(index, options, at);
  }
}
