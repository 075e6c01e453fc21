import { expect } from "vitest";
import { syntheticFrames } from "../src/bench/synthetic-frames.js";
import { VideoEncoder } from "../src/encode/video-encoder.js";
import type { EncodedVideoFrame } from "../src/encode/video-encoding.js";
import { type VideoCodecName, videoSize } from "../src/frames.js";
import { until } from "./support.js";

/** Starts the encoder's process and waits until it is set up: a fresh one is given no frames before. */
export async function warmed(encoder: VideoEncoder): Promise<VideoEncoder> {
  encoder.warm();
  await until(() => encoder.ready);
  return encoder;
}

/**
 * `count` synthetic frames through a VideoEncoder at the low size, with a keyframe requested at each
 * index of `keyframesAt` (the first frame is always one). The encoder has room for every frame: by
 * default one that falls behind, as on a loaded machine, drops frames. Waits up to 20 s for them all.
 */
export async function encodeSynthetic(codec: VideoCodecName, count: number, keyframesAt: number[] = []) {
  const { width, height } = videoSize("low");
  const frames: EncodedVideoFrame[] = [];
  const encoder = new VideoEncoder({
    encoding: { codec, width, height },
    onFrame: (f) => frames.push(f),
    maxInFlight: 1000,
  });
  await warmed(encoder);
  for await (const frame of syntheticFrames({ width, height, count })) {
    if (keyframesAt.includes(frame.index)) encoder.requestKeyframe();
    encoder.encode(frame);
    await new Promise((r) => setTimeout(r, 5));
  }
  // Short of them all after 20 s, the caller's checks tell which are missing.
  await until(() => frames.length >= count, 20_000).catch(() => {});
  const stats = { ...encoder.stats };
  await encoder.close();
  return { frames, stats, width, height };
}

/** encodeSynthetic's frames, every one of them, in order (checked). */
export async function encodedFrames(
  codec: VideoCodecName,
  count: number,
  keyframesAt: number[] = [],
): Promise<EncodedVideoFrame[]> {
  const { frames } = await encodeSynthetic(codec, count, keyframesAt);
  expect(frames.map((f) => f.index)).toEqual([...Array(count).keys()]);
  return frames;
}
