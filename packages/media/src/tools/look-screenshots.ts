/**
 * Writes PNGs of rendered frames for looking at: for each look, rest, several visemes, a blink and the
 * vertical framing, at every quality. `node --import tsx packages/media/src/tools/look-screenshots.ts [DIR]`
 * (default .ci/out/looks). Judge the drawing on these.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { VirtualClock } from "../clock.js";
import type { VideoQualityName } from "../frames.js";
import { generateLook } from "../look/generate/generate-look.js";
import { lookRequestOf } from "../look/generate/vocabulary.js";
import type { Viseme } from "../look/visemes.js";
import { PortraitRenderer } from "../render/portrait-renderer.js";
import { frameToPng } from "../render/poster.js";

const out = path.resolve(process.argv[2] ?? ".ci/out/looks");
mkdirSync(out, { recursive: true });
const only = process.env.LOOKS?.split(",");
const qualities = (process.env.QUALITIES?.split(",") ?? [
  "very_high",
  "high",
  "medium",
  "low",
]) as VideoQualityName[];

/** The catalog's seed avatars and their looks (services/catalog/seed/catalog.json). */
const catalog = JSON.parse(
  readFileSync(new URL("../../../../services/catalog/seed/catalog.json", import.meta.url), "utf8"),
);
const DEMO_LOOKS = [...catalog.public_avatars, ...catalog.demo_space_avatars].map(
  (a: { name: string; look: Record<string, string> }) => ({
    name: a.name.split(" ")[0]?.toLowerCase() ?? a.name,
    request: lookRequestOf(a.look),
  }),
);

for (const demo of DEMO_LOOKS.filter((d) => !only || only.includes(d.name))) {
  const t0 = performance.now();
  const look = generateLook(demo.request);
  const t1 = performance.now();
  console.log(`${demo.name}: generated in ${(t1 - t0).toFixed(0)} ms`);
  for (const quality of qualities) {
    for (const orientation of ["horizontal", "vertical"] as const) {
      const renderer = await PortraitRenderer.create({
        look,
        quality,
        orientation,
        clock: new VirtualClock(),
        seed: "shots",
      });
      const name = (what: string) => path.join(out, `${demo.name}-${quality}-${orientation}-${what}.png`);
      writeFileSync(name("rest"), frameToPng(renderer.still("rest", 0, "open")));
      if (orientation === "vertical" && quality !== "high") continue;
      for (const viseme of ["AI", "E", "O", "WQ", "FV", "MBP", "etc", "L"] as Viseme[]) {
        const frame = renderer.still(viseme, 1, "open");
        writeFileSync(name(`mouth-${viseme}`), frameToPng(frame));
      }
      writeFileSync(name("blink-half"), frameToPng(renderer.still("rest", 0, "half")));
      writeFileSync(name("blink-closed"), frameToPng(renderer.still("rest", 0, "closed")));
    }
  }
  console.log(`${demo.name}: rendered in ${(performance.now() - t1).toFixed(0)} ms`);
}
console.log(`screenshots in ${out}`);
