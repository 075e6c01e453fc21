/**
 * How long starting a renderer stalls the event loop, per quality: rasterizing the look on the main
 * thread (as before look workers) against asking a look worker thread (PortraitRenderer.create).
 * `node --import tsx packages/media/src/tools/bench-raster-stall.ts`. Figures on a shared machine are noisy.
 */
import { VirtualClock } from "../clock.js";
import { type VideoQualityName, videoSize } from "../frames.js";
import { decodeLook } from "../look/decode-look.js";
import { generateLook } from "../look/generate/generate-look.js";
import { LookWorkerPool } from "../look-worker/pool.js";
import { PortraitRenderer } from "../render/portrait-renderer.js";
import { rasterizeLook } from "../render/raster.js";
import { keyOfLook, RasterCache } from "../render/raster-cache.js";

const QUALITIES: VideoQualityName[] = ["very_high", "high", "medium", "low"];
const look = generateLook({ seed: "elena", presentation: "feminine", hairStyle: "long", outfit: "blazer" });
const lookKey = keyOfLook(look);
const pool = new LookWorkerPool(1);

/**
 * The longest the event loop went without running a 5 ms timer while `work` ran (a session's frame timer
 * waits that long), and how long the work took.
 */
async function stallOf(work: () => Promise<unknown> | unknown): Promise<{ stallMs: number; tookMs: number }> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  await new Promise((resolve) => setTimeout(resolve, 50));
  longest = 0;
  const start = performance.now();
  await work();
  const tookMs = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(ticker);
  return { stallMs: longest, tookMs };
}

// What the machine alone does to a 5 ms timer (other processes, GC): the floor of any figure below.
const idle = await stallOf(() => new Promise((resolve) => setTimeout(resolve, 2000)));
console.log(`idle for 2 s: event loop stalled ${idle.stallMs.toFixed(0)} ms (the machine's noise)`);
// The first job pays for the thread (and compiling its modules); a worker process pays it once.
const cold = await stallOf(() => pool.rasterize(look, lookKey, 640, 360));
console.log(
  `worker thread's first job: ${cold.tookMs.toFixed(0)} ms, event loop stalled ${cold.stallMs.toFixed(0)} ms`,
);
console.log("quality     size        main thread: stall / took     look worker: stall / took");
const decoded = decodeLook(look);
for (const quality of QUALITIES) {
  const size = videoSize(quality, "horizontal");
  const inline = await stallOf(() => rasterizeLook(decoded, size.width, size.height));
  const cache = new RasterCache(384 * 1024 * 1024, pool);
  const worker = await stallOf(() =>
    PortraitRenderer.create({ look, lookKey, quality, clock: new VirtualClock(), cache }),
  );
  console.log(
    `${quality.padEnd(11)} ${`${size.width}x${size.height}`.padEnd(11)} ${inline.stallMs.toFixed(0).padStart(8)} ms / ${inline.tookMs.toFixed(0).padStart(5)} ms ${worker.stallMs.toFixed(0).padStart(14)} ms / ${worker.tookMs.toFixed(0).padStart(5)} ms`,
  );
}
await pool.close();
