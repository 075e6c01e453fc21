/**
 * Prints the renderer's cost per frame at every quality (mean, p99) for a generated look:
 * `node --import tsx packages/media/src/tools/bench-render.ts [FRAMES]`.
 */
import { generateLook } from "../look/generate/generate-look.js";
import { benchRender } from "../render/bench.js";

const frames = Number(process.argv[2] ?? 500);
const look = generateLook({ seed: "bench", presentation: "feminine", hairStyle: "long" });
console.log("quality     size        rasterize   mean/frame   p99/frame");
for (const r of benchRender(look, undefined, frames)) {
  console.log(
    `${r.quality.padEnd(11)} ${`${r.width}x${r.height}`.padEnd(11)} ${r.rasterizeMs.toFixed(0).padStart(6)} ms ${r.meanMs.toFixed(3).padStart(9)} ms ${r.p99Ms.toFixed(3).padStart(9)} ms`,
  );
}
