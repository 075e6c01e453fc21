import type { AvatarLook } from "@avatar/contracts/catalog";
import { VirtualClock } from "../clock.js";
import { SAMPLES_PER_FRAME, type VideoQualityName, videoSize } from "../frames.js";
import { decodeLook } from "../look/decode-look.js";
import { seededRandom } from "../random.js";
import { PortraitRenderer } from "./portrait-renderer.js";
import { rasterizeLook } from "./raster.js";

/** Render cost of one quality: per frame, speaking (mouth, head and blinks all moving). */
export interface RenderCost {
  quality: VideoQualityName;
  width: number;
  height: number;
  frames: number;
  meanMs: number;
  p99Ms: number;
  /**
   * One-off: rasterizing the look at this size on one thread (what the first session of a look and size
   * costs a look worker thread).
   */
  rasterizeMs: number;
}

/**
 * The renderer's cost per frame at each quality, on one core: speech-like audio (noise bursts) keeps the
 * mouth moving. For `pnpm bench:media`; figures on a shared machine are noisy.
 */
export function benchRender(
  look: AvatarLook,
  qualities: VideoQualityName[] = ["very_high", "high", "medium", "low"],
  frames = 500,
): RenderCost[] {
  const speech = speechLike(frames);
  const decoded = decodeLook(look);
  return qualities.map((quality) => {
    const size = videoSize(quality, "horizontal");
    const t0 = performance.now();
    const raster = rasterizeLook(decoded, size.width, size.height);
    const rasterizeMs = performance.now() - t0;
    const renderer = new PortraitRenderer(raster, { clock: new VirtualClock(), seed: "bench" });
    renderer.pushAudio(speech);
    for (let i = 0; i < 25; i++) renderer.renderFrame(i * 40); // warm up the JIT
    const times: number[] = [];
    for (let i = 0; i < frames; i++) {
      const start = performance.now();
      renderer.renderFrame(i * 40);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const meanMs = times.reduce((a, b) => a + b, 0) / times.length;
    const p99Ms = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] as number;
    return { quality, width: renderer.width, height: renderer.height, frames, meanMs, p99Ms, rasterizeMs };
  });
}

/** Bursts of noise (syllables) and pauses at 24 kHz, deterministic. */
export function speechLike(frames: number, seed = "speech"): Int16Array {
  const random = seededRandom(seed);
  const perFrame = SAMPLES_PER_FRAME / 2;
  const pcm = new Int16Array(frames * perFrame);
  for (let f = 0; f < frames; f++) {
    const loud = f % 9 < 6 ? 0.15 + 0.6 * Math.abs(Math.sin(f * 0.7)) : 0;
    for (let i = 0; i < perFrame; i++) pcm[f * perFrame + i] = Math.round((random() * 2 - 1) * loud * 12000);
  }
  return pcm;
}
