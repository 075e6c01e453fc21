import type { AvatarLook } from "@avatar/contracts/catalog";
import { createCanvas, ImageData } from "@napi-rs/canvas";
import { VirtualClock } from "../clock.js";
import type { Orientation, VideoFrameI420, VideoQualityName } from "../frames.js";
import { i420ToRgba } from "./i420.js";
import { PortraitRenderer } from "./portrait-renderer.js";
import type { RasterCache } from "./raster-cache.js";

/** A frame as PNG bytes (posters, screenshots). */
export function frameToPng(video: VideoFrameI420): Buffer {
  const canvas = createCanvas(video.width, video.height);
  canvas.getContext("2d").putImageData(new ImageData(i420ToRgba(video), video.width, video.height), 0, 0);
  return canvas.toBuffer("image/png");
}

/** The avatar at rest (eyes open, mouth closed, head straight): its poster. */
export function renderPoster(
  look: AvatarLook,
  options: {
    quality?: VideoQualityName;
    orientation?: Orientation;
    lookKey?: string;
    cache?: RasterCache;
  } = {},
): Buffer {
  const renderer = new PortraitRenderer({
    look,
    lookKey: options.lookKey,
    quality: options.quality ?? "high",
    orientation: options.orientation ?? "horizontal",
    clock: new VirtualClock(),
    cache: options.cache,
    seed: "poster",
  });
  return frameToPng(renderer.still("rest", 0, "open"));
}
