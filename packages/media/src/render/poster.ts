import type { AvatarLook } from "@avatar/contracts/catalog";
import { createCanvas, ImageData } from "@napi-rs/canvas";
import type { Orientation, VideoFrameI420, VideoQualityName } from "../frames.js";
import { type LookWorkerPool, sharedLookWorkers } from "../look-worker/pool.js";
import { i420ToRgba } from "./i420.js";
import { keyOfLook } from "./raster-cache.js";

/** A frame as PNG bytes (posters, screenshots). */
export function frameToPng(video: VideoFrameI420): Buffer {
  const canvas = createCanvas(video.width, video.height);
  canvas.getContext("2d").putImageData(new ImageData(i420ToRgba(video), video.width, video.height), 0, 0);
  return canvas.toBuffer("image/png");
}

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
