import type { SKRSContext2D } from "@napi-rs/canvas";
import { alpha, darken, lighten, mix } from "./color.js";
import { facePath, type Geometry } from "./geometry.js";
import { HAIR_COLORS, type LookParams, SKIN_TONES } from "./vocabulary.js";

/**
 * The face: skin with soft light from the upper left, ears, nose, brows, cheeks, and the eyes in their
 * three states. Eyes are drawn the same way in the head layer (open) and in the eye sprites, which paint
 * the same skin around them so a blink covers the open eye exactly.
 */

export function skinFill(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const skin = SKIN_TONES[p.skinTone];
  const light = ctx.createRadialGradient(g.cx - 50, g.eyeY - 40, 20, g.cx, g.eyeY + 20, 260);
  light.addColorStop(0, lighten(skin, 0.1));
  light.addColorStop(0.6, skin);
  light.addColorStop(1, darken(skin, 0.16));
  ctx.fillStyle = light;
}

export function drawEars(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const skin = SKIN_TONES[p.skinTone];
  for (const side of [-1, 1]) {
    const x = g.cx + side * (g.cheekW - 2);
    ctx.beginPath();
    ctx.ellipse(x, g.eyeY + 34, 20, 40, side * 0.18, 0, Math.PI * 2);
    ctx.fillStyle = darken(skin, 0.08);
    ctx.fill();
    ctx.beginPath();
    ctx.ellipse(x + side * 4, g.eyeY + 34, 9, 25, side * 0.18, 0, Math.PI * 2);
    ctx.fillStyle = darken(skin, 0.22);
    ctx.fill();
  }
}

export function drawFace(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const skin = SKIN_TONES[p.skinTone];
  facePath(ctx, g);
  skinFill(ctx, p, g);
  ctx.fill();
  // Jaw shadow for depth.
  ctx.save();
  facePath(ctx, g);
  ctx.clip();
  const jaw = ctx.createLinearGradient(0, g.jawY - 40, 0, g.chinY);
  jaw.addColorStop(0, alpha(darken(skin, 0.3), 0));
  jaw.addColorStop(1, alpha(darken(skin, 0.3), 0.18));
  ctx.fillStyle = jaw;
  ctx.fillRect(g.cx - 200, g.jawY - 40, 400, 200);
  if (p.stubble) {
    ctx.beginPath();
    ctx.ellipse(g.cx, g.chinY - 40, g.jawW + 24, 92, 0, 0, Math.PI);
    ctx.fillStyle = alpha(mix(HAIR_COLORS[p.hairColor], skin, 0.35), 0.22);
    ctx.fill();
  }
  // Cheeks.
  for (const side of [-1, 1]) {
    const blush = ctx.createRadialGradient(
      g.cx + side * 92,
      g.eyeY + 70,
      4,
      g.cx + side * 92,
      g.eyeY + 70,
      52,
    );
    blush.addColorStop(0, alpha(mix(skin, "#e0707a", 0.6), p.presentation === "feminine" ? 0.22 : 0.12));
    blush.addColorStop(1, alpha("#e0707a", 0));
    ctx.fillStyle = blush;
    ctx.fillRect(g.cx + side * 92 - 60, g.eyeY + 10, 120, 120);
  }
  ctx.restore();
  drawNose(ctx, skin, g);
  drawBrows(ctx, p, g);
}

function drawNose(ctx: SKRSContext2D, skin: string, g: Geometry): void {
  const { cx, noseY } = g;
  ctx.strokeStyle = alpha(darken(skin, 0.35), 0.55);
  ctx.lineWidth = 3.5;
  ctx.lineCap = "round";
  ctx.beginPath();
  ctx.moveTo(cx + 6, g.eyeY + 10);
  ctx.bezierCurveTo(cx + 14, noseY - 30, cx + 22, noseY - 8, cx + 16, noseY + 2);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(cx - 20, noseY - 2);
  ctx.bezierCurveTo(cx - 14, noseY + 10, cx - 4, noseY + 8, cx, noseY + 6);
  ctx.bezierCurveTo(cx + 4, noseY + 8, cx + 14, noseY + 10, cx + 20, noseY - 2);
  ctx.stroke();
  const tip = ctx.createRadialGradient(cx - 4, noseY - 12, 2, cx - 4, noseY - 12, 18);
  tip.addColorStop(0, alpha(lighten(skin, 0.4), 0.5));
  tip.addColorStop(1, alpha(lighten(skin, 0.4), 0));
  ctx.fillStyle = tip;
  ctx.fillRect(cx - 24, noseY - 32, 40, 40);
}

export function drawBrows(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const color = darken(HAIR_COLORS[p.hairColor], 0.15);
  const weight = (p.presentation === "feminine" ? 7 : 10) + p.browWeight * 4;
  ctx.fillStyle = color;
  for (const side of [-1, 1]) {
    const x = g.cx + side * g.eyeDx;
    ctx.beginPath();
    ctx.moveTo(x - side * 34, g.browY + 8);
    ctx.bezierCurveTo(x - side * 14, g.browY - 10, x + side * 14, g.browY - 12, x + side * 38, g.browY + 4);
    ctx.bezierCurveTo(
      x + side * 14,
      g.browY - 12 + weight,
      x - side * 14,
      g.browY - 8 + weight,
      x - side * 34,
      g.browY + 8 + weight * 0.6,
    );
    ctx.closePath();
    ctx.fill();
  }
}

export type EyeDrawState = "open" | "half" | "closed";

/** Both eyes in a state, drawn in design coordinates. */
export function drawEyes(ctx: SKRSContext2D, p: LookParams, g: Geometry, state: EyeDrawState): void {
  for (const side of [-1, 1]) drawEye(ctx, p, g, g.cx + side * g.eyeDx, side, state);
}

function almond(ctx: SKRSContext2D, x: number, y: number, w: number, h: number, side: number): void {
  // Slightly lifted outer corner.
  const outer = side * w * 0.5;
  ctx.beginPath();
  ctx.moveTo(x - outer, y + 2);
  ctx.bezierCurveTo(x - outer * 0.5, y - h * 0.95, x + outer * 0.55, y - h * 0.95, x + outer, y - 3);
  ctx.bezierCurveTo(x + outer * 0.5, y + h * 0.55, x - outer * 0.5, y + h * 0.6, x - outer, y + 2);
  ctx.closePath();
}

function drawEye(
  ctx: SKRSContext2D,
  p: LookParams,
  g: Geometry,
  x: number,
  side: number,
  state: EyeDrawState,
): void {
  const skin = SKIN_TONES[p.skinTone];
  const y = g.eyeY;
  const w = g.eyeW;
  const h = g.eyeH;
  const lash = "#241816";
  const lid = darken(skin, 0.08);
  const fem = p.presentation === "feminine";
  // Crease above the eye.
  ctx.strokeStyle = alpha(darken(skin, 0.4), 0.35);
  ctx.lineWidth = 2.5;
  ctx.beginPath();
  ctx.moveTo(x - side * w * 0.42, y - h * 0.55);
  ctx.bezierCurveTo(
    x - side * w * 0.2,
    y - h * 1.25,
    x + side * w * 0.25,
    y - h * 1.25,
    x + side * w * 0.48,
    y - h * 0.6,
  );
  ctx.stroke();
  if (state !== "closed") {
    almond(ctx, x, y, w, h, side);
    ctx.fillStyle = "#f7f3ef";
    ctx.fill();
    ctx.save();
    almond(ctx, x, y, w, h, side);
    ctx.clip();
    const iris = ctx.createRadialGradient(x, y - 2, 2, x, y - 2, h * 0.55);
    iris.addColorStop(0, lighten(p.eyeColor, 0.35));
    iris.addColorStop(1, darken(p.eyeColor, 0.25));
    ctx.fillStyle = iris;
    ctx.beginPath();
    ctx.arc(x, y - 2, h * 0.55, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = "#120c0c";
    ctx.beginPath();
    ctx.arc(x, y - 2, h * 0.25, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = "rgba(255,255,255,0.9)";
    ctx.beginPath();
    ctx.arc(x - 4, y - 7, h * 0.14, 0, Math.PI * 2);
    ctx.fill();
    // Shadow of the upper lid on the eyeball.
    ctx.fillStyle = alpha("#000000", 0.12);
    ctx.fillRect(x - w, y - h, 2 * w, h * 0.45);
    if (state === "half") {
      ctx.fillStyle = lid;
      ctx.beginPath();
      ctx.rect(x - w, y - h * 1.2, 2 * w, h * 1.2);
      ctx.fill();
    }
    ctx.restore();
    // Upper lash line (lower edge of the lid when half closed).
    ctx.strokeStyle = lash;
    ctx.lineWidth = fem ? 5 : 4;
    ctx.lineCap = "round";
    ctx.beginPath();
    const outer = side * w * 0.5;
    if (state === "open") {
      ctx.moveTo(x - outer, y + 2);
      ctx.bezierCurveTo(x - outer * 0.5, y - h * 0.95, x + outer * 0.55, y - h * 0.95, x + outer, y - 3);
    } else {
      ctx.moveTo(x - outer, y + 1);
      ctx.bezierCurveTo(x - outer * 0.4, y - 2, x + outer * 0.4, y - 2, x + outer, y - 1);
    }
    ctx.stroke();
    if (fem) {
      ctx.beginPath();
      ctx.moveTo(x + outer, y - 3);
      ctx.lineTo(x + outer * 1.18, y - h * 0.4);
      ctx.stroke();
    }
    ctx.strokeStyle = alpha(darken(skin, 0.45), 0.4);
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x - outer * 0.8, y + h * 0.3);
    ctx.bezierCurveTo(x - outer * 0.3, y + h * 0.58, x + outer * 0.4, y + h * 0.55, x + outer * 0.9, y + 1);
    ctx.stroke();
  } else {
    almond(ctx, x, y, w, h, side);
    ctx.fillStyle = lid;
    ctx.fill();
    ctx.strokeStyle = lash;
    ctx.lineWidth = fem ? 5 : 4;
    ctx.lineCap = "round";
    const outer = side * w * 0.5;
    ctx.beginPath();
    ctx.moveTo(x - outer, y + 1);
    ctx.bezierCurveTo(x - outer * 0.4, y + h * 0.42, x + outer * 0.4, y + h * 0.42, x + outer, y - 1);
    ctx.stroke();
    if (fem) {
      ctx.beginPath();
      ctx.moveTo(x + outer, y - 1);
      ctx.lineTo(x + outer * 1.15, y - h * 0.2);
      ctx.stroke();
    }
  }
}

/** The region an eye sprite covers, in design coordinates (both eyes, lids included). */
export function eyeRegion(g: Geometry) {
  const w = 2 * g.eyeDx + g.eyeW * 1.5;
  const h = g.eyeH * 3;
  return { x: g.cx - w / 2, y: g.eyeY - h * 0.58, width: w, height: h };
}

/** The mask that feathers an eye sprite into the face: two soft ellipses (drawn on a mask canvas). */
export function eyeMask(ctx: SKRSContext2D, g: Geometry): void {
  for (const side of [-1, 1]) {
    const x = g.cx + side * g.eyeDx;
    const mask = ctx.createRadialGradient(x, g.eyeY - 4, g.eyeW * 0.5, x, g.eyeY - 4, g.eyeW * 0.78);
    mask.addColorStop(0, "rgba(0,0,0,1)");
    mask.addColorStop(1, "rgba(0,0,0,0)");
    ctx.fillStyle = mask;
    ctx.save();
    ctx.translate(x, g.eyeY - 4);
    ctx.scale(1, 0.62);
    ctx.translate(-x, -(g.eyeY - 4));
    ctx.fillRect(x - g.eyeW * 0.8, g.eyeY - 4 - g.eyeW * 0.8, g.eyeW * 1.6, g.eyeW * 1.6);
    ctx.restore();
  }
}
