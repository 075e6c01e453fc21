import { threadId } from "node:worker_threads";
import { AvatarLookSchema } from "@avatar/contracts/catalog";
import { clone, toBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { decodeLook } from "../src/look/decode-look.js";
import { generateLook } from "../src/look/generate/generate-look.js";
import { LookParamsError } from "../src/look/generate/vocabulary.js";
import { LookError } from "../src/look/look-error.js";
import { LookWorkerPool } from "../src/look-worker/pool.js";
import { rasterizeLook } from "../src/render/raster.js";
import { keyOfLook, RasterCache } from "../src/render/raster-cache.js";
import { renderPoster } from "../src/render/render-poster.js";
import { digest, testLook } from "./support.js";

/** Looks drawn in worker threads: the same pixels as on the main thread, errors as they were. */

const workers = new LookWorkerPool(1);
afterAll(() => workers.close());

const bytesOf = (a: ArrayBufferView) => digest(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));

/** Every pixel and span a raster holds, as one digest. */
function rasterDigest(raster: Awaited<ReturnType<typeof rasterizeLook>>): string {
  const parts = [
    ...raster.bases.map((b) => digest(b.data)),
    ...[...raster.heads, ...raster.mouths.flatMap((m) => m.byTilt.map((p) => p.sprite))].flatMap((s) => [
      bytesOf(s.y),
      bytesOf(s.u),
      bytesOf(s.v),
      bytesOf(s.alphaY),
      bytesOf(s.spansY.spans),
    ]),
    JSON.stringify([raster.headX, raster.headY, raster.scale, raster.bytes]),
  ];
  return parts.join(",");
}

describe("LookWorkerPool", () => {
  it("rasterizes a look in a worker thread into the same raster as on this thread", async () => {
    const look = testLook();
    const inWorker = await workers.rasterize(look, keyOfLook(look), 640, 360);
    expect(rasterDigest(inWorker)).toBe(rasterDigest(rasterizeLook(decodeLook(look), 640, 360)));
    expect(inWorker.bases[0]?.data).toBeInstanceOf(Uint8Array);
    expect(threadId).toBe(0);
  });

  it("refuses a look it cannot draw with the LookError naming the field, and keeps working", async () => {
    const broken = clone(AvatarLookSchema, testLook());
    broken.mouths = broken.mouths.filter((m) => m.name !== "O");
    const err = await workers.rasterize(broken, "broken", 640, 360).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LookError);
    expect(err).toMatchObject({ field: "mouths", message: "mouths: missing visemes O" });
    const look = testLook();
    expect((await workers.rasterize(look, keyOfLook(look), 640, 360)).width).toBe(640);
  });

  it("checks a look as decodeLook does: a good one passes, a broken one is the same LookError", async () => {
    await expect(workers.check(testLook())).resolves.toBeUndefined();
    const broken = clone(AvatarLookSchema, testLook());
    broken.mouths = broken.mouths.filter((m) => m.name !== "O");
    const here = (() => {
      try {
        decodeLook(broken);
      } catch (e) {
        return e;
      }
    })();
    const there = await workers.check(broken).catch((e: unknown) => e);
    expect(there).toBeInstanceOf(LookError);
    expect(there).toMatchObject({ field: (here as LookError).field, message: (here as LookError).message });
  });

  it("generates the same look as generateLook, and refuses unknown choices as it does", async () => {
    const request = { seed: "worker", hairStyle: "curls" };
    const made = await workers.generate(request, 0.3);
    expect(Buffer.from(toBinary(AvatarLookSchema, made))).toEqual(
      Buffer.from(toBinary(AvatarLookSchema, generateLook(request, 0.3))),
    );
    const err = await workers.generate({ seed: "x", outfit: "cape" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LookParamsError);
    expect(err).toMatchObject({ field: "outfit" });
  });

  it("renders posters as PNG of the frame size", async () => {
    const png = await renderPoster(testLook(), { quality: "low", orientation: "vertical", workers });
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join("")).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([360, 640]);
  });

  it("fails the jobs of a closed pool instead of leaving them waiting", async () => {
    const pool = new LookWorkerPool(1);
    const look = testLook();
    const running = expect(pool.rasterize(look, keyOfLook(look), 640, 360)).rejects.toThrow(/closed/);
    const waiting = expect(pool.rasterize(look, keyOfLook(look), 854, 480)).rejects.toThrow(/closed/);
    await pool.close();
    await Promise.all([running, waiting]);
    await expect(pool.rasterize(look, "k", 640, 360)).rejects.toThrow(/closed/);
  });
});

describe("RasterCache", () => {
  it("rasterizes a look once per size, however many renderers ask at once", async () => {
    const pool = new LookWorkerPool(1);
    const cache = new RasterCache(384 * 1024 * 1024, pool);
    const look = testLook();
    const [a, b, c] = await Promise.all([
      cache.get(look, 640, 360),
      cache.get(look, 640, 360),
      cache.get(look, 640, 360),
    ]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(await cache.get(look, 640, 360)).toBe(a);
    expect(pool.jobsRun).toBe(1);
    await cache.get(look, 360, 640);
    expect(pool.jobsRun).toBe(2);
    expect(cache.bytes).toBeGreaterThan(0);
    await pool.close();
  });

  it("forgets a failed rasterization, so a later ask tries again", async () => {
    const pool = new LookWorkerPool(1);
    const cache = new RasterCache(384 * 1024 * 1024, pool);
    const broken = clone(AvatarLookSchema, testLook());
    broken.bodyPng = broken.bodyPng.slice(0, 100);
    await expect(cache.get(broken, 640, 360, "broken")).rejects.toBeInstanceOf(LookError);
    await expect(cache.get(broken, 640, 360, "broken")).rejects.toBeInstanceOf(LookError);
    expect(pool.jobsRun).toBe(2);
    await pool.close();
  });
});
