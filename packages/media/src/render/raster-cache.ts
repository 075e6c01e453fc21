import { createHash } from "node:crypto";
import { type AvatarLook, AvatarLookSchema } from "@avatar/contracts/catalog";
import { toBinary } from "@bufbuild/protobuf";
import { type DecodedLook, decodeLook } from "../look/decode-look.js";
import { type LookRaster, rasterizeLook } from "./raster.js";

/**
 * Rasterized looks shared by every renderer of the process, least recently used first out when the
 * cache holds more than its budget of bytes. A look is decoded once and rasterized once per frame size.
 */
export class RasterCache {
  private readonly rasters = new Map<string, LookRaster>();
  private readonly decoded = new Map<string, DecodedLook>();
  private held = 0;

  constructor(readonly maxBytes = 384 * 1024 * 1024) {}

  /** The look rasterized at this size; throws LookError when the look cannot be drawn. */
  get(look: AvatarLook, width: number, height: number, lookKey = keyOfLook(look)): LookRaster {
    const key = `${lookKey}:${width}x${height}`;
    const hit = this.rasters.get(key);
    if (hit) {
      this.rasters.delete(key);
      this.rasters.set(key, hit);
      return hit;
    }
    let decoded = this.decoded.get(lookKey);
    if (!decoded) {
      decoded = decodeLook(look);
      this.decoded.set(lookKey, decoded);
      // Decoded looks are small next to rasters; keep the most recent few dozen.
      if (this.decoded.size > 32) this.decoded.delete(this.decoded.keys().next().value as string);
    }
    const raster = rasterizeLook(decoded, width, height);
    this.rasters.set(key, raster);
    this.held += raster.bytes;
    for (const [oldKey, old] of this.rasters) {
      if (this.held <= this.maxBytes || oldKey === key) break;
      this.rasters.delete(oldKey);
      this.held -= old.bytes;
    }
    return raster;
  }

  get bytes(): number {
    return this.held;
  }
}

/** A digest of the look's bytes: equal looks share rasters. */
export function keyOfLook(look: AvatarLook): string {
  return createHash("sha256").update(toBinary(AvatarLookSchema, look)).digest("hex").slice(0, 32);
}

/** The process-wide cache renderers use unless given their own. */
export const sharedRasterCache = new RasterCache();
