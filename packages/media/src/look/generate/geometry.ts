import type { SKRSContext2D } from "@napi-rs/canvas";
import type { LookParams } from "./vocabulary.js";

/**
 * The figure's proportions in design units (a 1024 x 1400 canvas, drawn at any resolution): where the face,
 * eyes, mouth, neck and shoulders sit. Every drawing module takes its positions from here.
 */
export const DESIGN_WIDTH = 1024;
export const DESIGN_HEIGHT = 1400;

export interface Geometry {
  cx: number;
  /** Eye line. */
  eyeY: number;
  eyeDx: number;
  eyeW: number;
  eyeH: number;
  mouthY: number;
  noseY: number;
  browY: number;
  /** Face outline: top of the skull, half widths at temples, cheeks and jaw, chin. */
  skullTop: number;
  templeW: number;
  cheekW: number;
  jawW: number;
  jawY: number;
  chinY: number;
  chinW: number;
  neckW: number;
  neckTop: number;
  shoulderY: number;
  shoulderW: number;
  pivotY: number;
}

export function geometryOf(p: LookParams): Geometry {
  const fem = p.presentation === "feminine";
  const jaw = p.jaw * 6;
  return {
    cx: 512,
    eyeY: 560,
    eyeDx: 66,
    eyeW: fem ? 60 : 56,
    eyeH: fem ? 27 : 24,
    mouthY: 690,
    noseY: 640,
    browY: fem ? 512 : 516,
    skullTop: 372,
    templeW: 146,
    cheekW: fem ? 146 : 152,
    jawW: (fem ? 108 : 122) + jaw,
    jawY: 705,
    chinY: 772 + (fem ? -4 : 2),
    chinW: fem ? 40 : 52,
    neckW: fem ? 60 : 76,
    neckTop: 700,
    shoulderY: 870,
    shoulderW: fem ? 345 : 392,
    pivotY: 735,
  };
}

/** The face outline (skin), closed. */
export function facePath(ctx: SKRSContext2D, g: Geometry): void {
  const { cx } = g;
  ctx.beginPath();
  ctx.moveTo(cx, g.skullTop);
  ctx.bezierCurveTo(cx + 95, g.skullTop, cx + g.templeW, g.skullTop + 70, cx + g.templeW, g.eyeY - 70);
  ctx.bezierCurveTo(
    cx + g.templeW + 4,
    g.eyeY - 10,
    cx + g.cheekW,
    g.eyeY + 40,
    cx + g.cheekW - 8,
    g.eyeY + 80,
  );
  ctx.bezierCurveTo(
    cx + g.cheekW - 18,
    g.jawY - 20,
    cx + g.jawW + 10,
    g.jawY + 10,
    cx + g.jawW - 10,
    g.jawY + 30,
  );
  ctx.bezierCurveTo(cx + g.chinW + 30, g.chinY - 12, cx + g.chinW, g.chinY, cx, g.chinY);
  ctx.bezierCurveTo(cx - g.chinW, g.chinY, cx - g.chinW - 30, g.chinY - 12, cx - g.jawW + 10, g.jawY + 30);
  ctx.bezierCurveTo(
    cx - g.jawW - 10,
    g.jawY + 10,
    cx - g.cheekW + 18,
    g.jawY - 20,
    cx - g.cheekW + 8,
    g.eyeY + 80,
  );
  ctx.bezierCurveTo(cx - g.cheekW, g.eyeY + 40, cx - g.templeW - 4, g.eyeY - 10, cx - g.templeW, g.eyeY - 70);
  ctx.bezierCurveTo(cx - g.templeW, g.skullTop + 70, cx - 95, g.skullTop, cx, g.skullTop);
  ctx.closePath();
}
