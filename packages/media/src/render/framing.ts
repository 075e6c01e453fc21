import type { DecodedLook } from "../look/decode-look.js";

/**
 * Where the figure sits in a frame: a talking-head shot in 16:9 (head about 45% of the height), a closer
 * portrait in 9:16; eyes a little above the middle, the body always reaching the bottom edge.
 */
export interface Framing {
  /** Figure canvas pixels to frame pixels. */
  scale: number;
  /** Frame position of the canvas origin. */
  offsetX: number;
  offsetY: number;
}

/** Eyes-to-mouth distance as a share of the frame height, and the eyes' height, per orientation. */
const HORIZONTAL = { face: 0.122, eyes: 0.4 };
const VERTICAL = { face: 0.082, eyes: 0.39 };

export function frameFigure(look: DecodedLook, width: number, height: number): Framing {
  const { eyes, mouth } = look.anchors;
  const target = width >= height ? HORIZONTAL : VERTICAL;
  const faceUnit = mouth.y - eyes.y;
  const eyesY = target.eyes * height;
  // The canvas bottom must reach the frame bottom, else the figure would float.
  const scale = Math.max((target.face * height) / faceUnit, (height - eyesY) / (look.height - eyes.y));
  return { scale, offsetX: width / 2 - eyes.x * scale, offsetY: eyesY - eyes.y * scale };
}

/** Scale and offset that make an image cover the frame, centred. */
export function cover(imageWidth: number, imageHeight: number, width: number, height: number): Framing {
  const scale = Math.max(width / imageWidth, height / imageHeight);
  return { scale, offsetX: (width - imageWidth * scale) / 2, offsetY: (height - imageHeight * scale) / 2 };
}
