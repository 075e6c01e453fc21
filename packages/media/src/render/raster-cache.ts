import { createHash } from "node:crypto";
import { type AvatarLook, AvatarLookSchema } from "@avatar/contracts/catalog";
import { toBinary } from "@bufbuild/protobuf";
import { type LookWorkerPool, sharedLookWorkers } from "../look-worker/pool.js";
import type { LookRaster } from "./raster.js";

/**
 * Rasterized looks shared by every renderer of the process, least recently used first out when the
 * cache holds more than its budget of bytes. A look is rasterized once per frame size, in a look worker
 * thread (the event loop goes on meanwhile); renderers asking for one being rasterized wait for it.
 */
export class RasterCache {
  private readonly rasters = new Map<string, LookRaster>();
  private readonly pending = new Map<string, Promise<LookRaster>>();
  private held = 0;

  constructor(
    readonly maxBytes = 384 * 1024 * 1024,
    private readonly workers: LookWorkerPool = sharedLookWorkers,
  ) {}

  /** The look rasterized at this size; rejects with LookError when the look cannot be drawn. */
  get(look: AvatarLook, width: number, height: number, lookKey = keyOfLook(look)): Promise<LookRaster> {
    const key = `${lookKey}:${width}x${height}`;
    const hit = this.rasters.get(key);
    if (hit) {
      this.rasters.delete(key);
      this.rasters.set(key, hit);
      return Promise.resolve(hit);
    }
    let raster = this.pending.get(key);
    if (!raster) {
      raster = this.workers.rasterize(look, lookKey, width, height).then((made) => {
        this.keep(key, made);
        return made;
      });
      const settled = () => this.pending.delete(key);
      raster.then(settled, settled);
      this.pending.set(key, raster);
    }
    return raster;
  }

  get bytes(): number {
    return this.held;
  }

  private keep(key: string, raster: LookRaster): void {
    this.rasters.set(key, raster);
    this.held += raster.bytes;
    for (const [oldKey, old] of this.rasters) {
      if (this.held <= this.maxBytes || oldKey === key) break;
      this.rasters.delete(oldKey);
      this.held -= old.bytes;
    }
  }
}

/** A digest of the look's bytes: equal looks share rasters. */
export function keyOfLook(look: AvatarLook): string {
  return createHash("sha256").update(toBinary(AvatarLookSchema, look)).digest("hex").slice(0, 32);
}

/** The process-wide cache renderers use unless given their own. */
export const sharedRasterCache = new RasterCache();
