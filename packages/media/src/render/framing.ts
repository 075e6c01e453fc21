import type { DecodedLook } from "../look/decode-look.js";

/**
 * Where the figure sits in a frame, framed as a presenter's video is: a medium close-up, the eyes about a
 * third from the top, head and shoulders filling the frame (16:9: the head about half the height; 9:16:
 * the shoulders as wide as the frame), the body always reaching the bottom edge.
 */
export interface Framing {
  /** Figure canvas pixels to frame pixels. */
  scale: number;
  /** Frame position of the canvas origin. */
  offsetX: number;
  offsetY: number;
}

/** Eyes-to-mouth distance as a share of the frame height, and the eyes' height, per orientation. */
const HORIZONTAL = { face: 0.15, eyes: 0.36 };
const VERTICAL = { face: 0.098, eyes: 0.36 };

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
