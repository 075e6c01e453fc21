import { createCanvas, ImageData } from "@napi-rs/canvas";
import type { VideoFrameI420 } from "../frames.js";
import { i420ToRgba } from "./i420.js";

/** A frame as PNG bytes (posters, screenshots). */
export function frameToPng(video: VideoFrameI420): Buffer {
  const canvas = createCanvas(video.width, video.height);
  canvas.getContext("2d").putImageData(new ImageData(i420ToRgba(video), video.width, video.height), 0, 0);
  return canvas.toBuffer("image/png");
}
