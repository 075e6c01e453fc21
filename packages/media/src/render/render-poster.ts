import type { AvatarLook } from "@avatar/contracts/catalog";
import type { Orientation, VideoQualityName } from "../frames.js";
import { type LookWorkerPool, sharedLookWorkers } from "../look-worker/pool.js";
import { keyOfLook } from "./raster-cache.js";

/**
 * The avatar at rest (eyes open, mouth closed, head straight): its poster, drawn in a look worker thread.
 * Rejects with LookError for a look that cannot be drawn.
 */
export function renderPoster(
  look: AvatarLook,
  options: {
    quality?: VideoQualityName;
    orientation?: Orientation;
    lookKey?: string;
    workers?: LookWorkerPool;
  } = {},
): Promise<Buffer> {
  return (options.workers ?? sharedLookWorkers).poster(
    look,
    options.lookKey ?? keyOfLook(look),
    options.quality ?? "high",
    options.orientation ?? "horizontal",
  );
}
