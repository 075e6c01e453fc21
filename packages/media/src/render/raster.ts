import { createCanvas, type Image, ImageData, type SKRSContext2D } from "@napi-rs/canvas";
import type { DecodedLook, Point } from "../look/decode-look.js";
import { EYE_STATES, type EyeState, type Viseme } from "../look/visemes.js";
import { cover, type Framing, frameFigure } from "./framing.js";
import { type PlanarImage, rgbaToI420, rgbaToSprite, type Sprite } from "./i420.js";

/**
 * A look rasterized for one frame size: everything a frame needs, precomputed, so that a frame is a copy
 * of a base image plus a few sprite blits. Built once per (look, size) and shared by every session that
 * renders that look at that size (see RasterCache).
 */

/** Head tilts rasterized, degrees; idle motion moves between them. */
export const HEAD_TILTS_DEG = [-1.8, -0.9, 0, 0.9, 1.8];

export interface PlacedSprite {
  sprite: Sprite;
  /** Top left relative to the head sprite's top left. */
  dx: number;
  dy: number;
}

export interface MouthSprites {
  viseme: Viseme;
  openness: number;
  /** One per head tilt. */
  byTilt: PlacedSprite[];
}

export interface LookRaster {
  width: number;
  height: number;
  /** Background and body, one per breathing offset (index = pixels the body is raised). */
  bases: PlanarImage[];
  /** Head sprites per tilt, and where the untilted head's top left sits in the frame. */
  heads: Sprite[];
  headX: number;
  headY: number;
  eyes: Record<EyeState, PlacedSprite[]>;
  mouths: MouthSprites[];
  /** Frame pixels per canvas pixel: motion amplitudes scale with it. */
  scale: number;
  bytes: number;
}

export function rasterizeLook(look: DecodedLook, width: number, height: number): LookRaster {
  const framing = frameFigure(look, width, height);
  const breathMax = Math.max(1, Math.round(height * 0.0028));
  const backdrop = backgroundRgba(look.background, width, height);
  const bases: PlanarImage[] = [];
  for (let lift = 0; lift <= breathMax; lift++)
    bases.push(baseImage(look, backdrop, framing, width, height, lift));

  const pivot = toFrame(look.anchors.headPivot, framing);
  const box = headBox(look, framing, width, height);
  const heads = HEAD_TILTS_DEG.map((deg) => {
    const ctx = layerContext(box.width, box.height);
    ctx.translate(-box.x, -box.y);
    rotateAbout(ctx, pivot, deg);
    placeFigure(ctx, framing);
    ctx.drawImage(look.head, 0, 0);
    return spriteOf(ctx, box.width, box.height);
  });

  const placeOnHead = (image: Image, anchor: Point, deg: number): PlacedSprite => {
    const w = evenCeil(image.width * framing.scale * 1.06 + 4);
    const h = evenCeil(image.height * framing.scale * 1.06 + 4);
    const at = rotatePoint(toFrame(anchor, framing), pivot, deg);
    const left = Math.round(at.x - w / 2) & ~1;
    const top = Math.round(at.y - h / 2) & ~1;
    const ctx = layerContext(w, h);
    ctx.translate(at.x - left, at.y - top);
    ctx.rotate((deg * Math.PI) / 180);
    ctx.scale(framing.scale, framing.scale);
    ctx.drawImage(image, -image.width / 2, -image.height / 2);
    return { sprite: spriteOf(ctx, w, h), dx: left - box.x, dy: top - box.y };
  };
  const eyes = Object.fromEntries(
    EYE_STATES.map((state) => [
      state,
      HEAD_TILTS_DEG.map((deg) => placeOnHead(look.eyes[state], look.anchors.eyes, deg)),
    ]),
  ) as Record<EyeState, PlacedSprite[]>;
  const mouths = look.mouths.map((m) => ({
    viseme: m.viseme,
    openness: m.openness,
    byTilt: HEAD_TILTS_DEG.map((deg) => placeOnHead(m.image, look.anchors.mouth, deg)),
  }));

  const sprites = [
    ...heads,
    ...Object.values(eyes).flatMap((list) => list.map((p) => p.sprite)),
    ...mouths.flatMap((m) => m.byTilt.map((p) => p.sprite)),
  ];
  const bytes = bases.reduce((n, b) => n + b.data.length, 0) + sprites.reduce((n, s) => n + s.bytes, 0);
  return {
    width,
    height,
    bases,
    heads,
    headX: box.x,
    headY: box.y,
    eyes,
    mouths,
    scale: framing.scale,
    bytes,
  };
}

function layerContext(width: number, height: number): SKRSContext2D {
  const ctx = createCanvas(width, height).getContext("2d");
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = "high";
  return ctx;
}

function backgroundRgba(background: Image, width: number, height: number): Uint8ClampedArray {
  const ctx = layerContext(width, height);
  const fit = cover(background.width, background.height, width, height);
  ctx.drawImage(
    background,
    fit.offsetX,
    fit.offsetY,
    background.width * fit.scale,
    background.height * fit.scale,
  );
  return ctx.getImageData(0, 0, width, height).data;
}

function baseImage(
  look: DecodedLook,
  backdrop: Uint8ClampedArray,
  framing: Framing,
  width: number,
  height: number,
  lift: number,
): PlanarImage {
  const ctx = layerContext(width, height);
  ctx.putImageData(new ImageData(backdrop, width, height), 0, 0);
  ctx.translate(0, -lift);
  placeFigure(ctx, framing);
  // The body is drawn a little taller than the frame so lifting it never shows a gap at the bottom.
  ctx.drawImage(look.body, 0, 0);
  ctx.drawImage(
    look.body,
    0,
    look.height - 1,
    look.width,
    1,
    0,
    look.height - 1,
    look.width,
    lift / framing.scale + 2,
  );
  return rgbaToI420(ctx.getImageData(0, 0, width, height).data, width, height);
}

/** The head's bounding box in frame pixels, with room for tilts and mouths wider than the head. */
function headBox(look: DecodedLook, framing: Framing, width: number, height: number) {
  const ctx = layerContext(look.width, look.height);
  ctx.drawImage(look.head, 0, 0);
  const alpha = ctx.getImageData(0, 0, look.width, look.height).data;
  let x0 = look.width;
  let y0 = look.height;
  let x1 = 0;
  let y1 = 0;
  for (let y = 0; y < look.height; y++) {
    for (let x = 0; x < look.width; x++) {
      if ((alpha[(y * look.width + x) * 4 + 3] as number) === 0) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (x1 < x0) x0 = x1 = y0 = y1 = 0;
  const margin = 0.06 * Math.max(x1 - x0, y1 - y0) * framing.scale + 8;
  const left = Math.max(-width, Math.floor(framing.offsetX + x0 * framing.scale - margin)) & ~1;
  const top = Math.max(-height, Math.floor(framing.offsetY + y0 * framing.scale - margin)) & ~1;
  const right = Math.min(2 * width, Math.ceil(framing.offsetX + x1 * framing.scale + margin));
  const bottom = Math.min(2 * height, Math.ceil(framing.offsetY + y1 * framing.scale + margin));
  return { x: left, y: top, width: evenCeil(right - left), height: evenCeil(bottom - top) };
}

function placeFigure(ctx: SKRSContext2D, framing: Framing): void {
  ctx.translate(framing.offsetX, framing.offsetY);
  ctx.scale(framing.scale, framing.scale);
}

function rotateAbout(ctx: SKRSContext2D, pivot: Point, deg: number): void {
  ctx.translate(pivot.x, pivot.y);
  ctx.rotate((deg * Math.PI) / 180);
  ctx.translate(-pivot.x, -pivot.y);
}

function rotatePoint(p: Point, pivot: Point, deg: number): Point {
  const r = (deg * Math.PI) / 180;
  const dx = p.x - pivot.x;
  const dy = p.y - pivot.y;
  return {
    x: pivot.x + dx * Math.cos(r) - dy * Math.sin(r),
    y: pivot.y + dx * Math.sin(r) + dy * Math.cos(r),
  };
}

const toFrame = (p: Point, f: Framing): Point => ({
  x: f.offsetX + p.x * f.scale,
  y: f.offsetY + p.y * f.scale,
});
const evenCeil = (n: number) => Math.ceil(n / 2) * 2;

function spriteOf(ctx: SKRSContext2D, width: number, height: number): Sprite {
  return rgbaToSprite(ctx.getImageData(0, 0, width, height).data, width, height);
}
