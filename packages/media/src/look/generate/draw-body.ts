import type { SKRSContext2D } from "@napi-rs/canvas";
import { alpha, darken, lighten } from "./color.js";
import { drawHairBehindBody } from "./draw-hair.js";
import { DESIGN_HEIGHT, type Geometry } from "./geometry.js";
import { type LookParams, SKIN_TONES } from "./vocabulary.js";

/** Long hair behind, neck, shoulders and clothes: the body layer, which breathes but never tilts. */
export function drawBody(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const skin = SKIN_TONES[p.skinTone];
  drawHairBehindBody(ctx, p, g);
  if (p.outfit === "blazer" || p.outfit === "vneck") drawCollarBack(ctx, g, p.shirtColor);
  drawNeck(ctx, g, skin);
  if (p.outfit === "turtleneck") drawTurtleneck(ctx, g, p.outfitColor);
  else drawTorso(ctx, p, g);
}

/** The back of a shirt collar, seen on both sides of the neck (which is drawn over it). */
function drawCollarBack(ctx: SKRSContext2D, g: Geometry, shirt: string): void {
  const { cx } = g;
  ctx.beginPath();
  ctx.moveTo(cx - g.neckW - 6, g.shoulderY - 62);
  ctx.quadraticCurveTo(cx, g.shoulderY - 74, cx + g.neckW + 6, g.shoulderY - 62);
  ctx.lineTo(cx + g.neckW + 40, g.shoulderY);
  ctx.lineTo(cx - g.neckW - 40, g.shoulderY);
  ctx.closePath();
  ctx.fillStyle = darken(shirt, 0.08);
  ctx.fill();
  ctx.strokeStyle = darken(shirt, 0.2);
  ctx.lineWidth = 2.5;
  ctx.stroke();
}

function drawNeck(ctx: SKRSContext2D, g: Geometry, skin: string): void {
  const { cx } = g;
  ctx.beginPath();
  ctx.moveTo(cx - g.neckW, g.neckTop);
  ctx.bezierCurveTo(
    cx - g.neckW + 2,
    g.neckTop + 120,
    cx - g.neckW - 10,
    g.shoulderY - 60,
    cx - g.neckW - 40,
    g.shoulderY,
  );
  ctx.lineTo(cx + g.neckW + 40, g.shoulderY);
  ctx.bezierCurveTo(
    cx + g.neckW + 10,
    g.shoulderY - 60,
    cx + g.neckW - 2,
    g.neckTop + 120,
    cx + g.neckW,
    g.neckTop,
  );
  ctx.closePath();
  const shade = ctx.createLinearGradient(0, g.neckTop, 0, g.shoulderY);
  shade.addColorStop(0, darken(skin, 0.32));
  shade.addColorStop(0.45, darken(skin, 0.12));
  shade.addColorStop(1, darken(skin, 0.04));
  ctx.fillStyle = shade;
  ctx.fill();
  // Side shading gives the neck volume.
  const sides = ctx.createLinearGradient(cx - g.neckW, 0, cx + g.neckW, 0);
  sides.addColorStop(0, alpha("#000000", 0.12));
  sides.addColorStop(0.3, alpha("#000000", 0));
  sides.addColorStop(0.7, alpha("#000000", 0));
  sides.addColorStop(1, alpha("#000000", 0.14));
  ctx.fillStyle = sides;
  ctx.fill();
}

/** The shoulders' silhouette from the collar line down to the bottom edge. */
function torsoPath(ctx: SKRSContext2D, g: Geometry, collarDrop: number): void {
  const { cx } = g;
  const w = g.shoulderW;
  ctx.beginPath();
  ctx.moveTo(cx - g.neckW - 46, g.shoulderY - 18);
  ctx.bezierCurveTo(cx - 160, g.shoulderY + 4, cx - w + 60, g.shoulderY + 8, cx - w + 10, g.shoulderY + 70);
  ctx.bezierCurveTo(
    cx - w - 20,
    g.shoulderY + 110,
    cx - w - 40,
    g.shoulderY + 220,
    cx - w - 44,
    DESIGN_HEIGHT + 10,
  );
  ctx.lineTo(cx + w + 44, DESIGN_HEIGHT + 10);
  ctx.bezierCurveTo(
    cx + w + 40,
    g.shoulderY + 220,
    cx + w + 20,
    g.shoulderY + 110,
    cx + w - 10,
    g.shoulderY + 70,
  );
  ctx.bezierCurveTo(
    cx + w - 60,
    g.shoulderY + 8,
    cx + 160,
    g.shoulderY + 4,
    cx + g.neckW + 46,
    g.shoulderY - 18,
  );
  ctx.bezierCurveTo(
    cx + 40,
    g.shoulderY + collarDrop,
    cx - 40,
    g.shoulderY + collarDrop,
    cx - g.neckW - 46,
    g.shoulderY - 18,
  );
  ctx.closePath();
}

function fillCloth(ctx: SKRSContext2D, g: Geometry, color: string): void {
  const light = ctx.createLinearGradient(g.cx - g.shoulderW, g.shoulderY, g.cx + g.shoulderW, DESIGN_HEIGHT);
  light.addColorStop(0, lighten(color, 0.1));
  light.addColorStop(0.5, color);
  light.addColorStop(1, darken(color, 0.22));
  ctx.fillStyle = light;
  ctx.fill();
  const top = ctx.createLinearGradient(0, g.shoulderY - 20, 0, g.shoulderY + 140);
  top.addColorStop(0, alpha("#ffffff", 0.1));
  top.addColorStop(1, alpha("#ffffff", 0));
  ctx.fillStyle = top;
  ctx.fill();
}

function drawTorso(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const { cx } = g;
  const open = p.outfit === "blazer" || p.outfit === "vneck" || p.outfit === "shirt";
  const main = p.outfit === "shirt" ? p.shirtColor : p.outfitColor;
  torsoPath(ctx, g, open ? 10 : 26);
  fillCloth(ctx, g, main);

  if (p.outfit === "sweater") {
    // Ribbed crew neck.
    ctx.strokeStyle = darken(main, 0.18);
    ctx.lineWidth = 16;
    ctx.beginPath();
    ctx.moveTo(cx - g.neckW - 40, g.shoulderY - 12);
    ctx.bezierCurveTo(
      cx - 40,
      g.shoulderY + 34,
      cx + 40,
      g.shoulderY + 34,
      cx + g.neckW + 40,
      g.shoulderY - 12,
    );
    ctx.stroke();
    return;
  }
  const depth = p.outfit === "shirt" ? 150 : 250;
  // The opening: skin (or the shirt under a blazer / sweater) in a V.
  const inner = p.outfit === "shirt" ? darken(SKIN_TONES[p.skinTone], 0.06) : p.shirtColor;
  ctx.beginPath();
  ctx.moveTo(cx - g.neckW - 30, g.shoulderY - 16);
  ctx.lineTo(cx, g.shoulderY + depth);
  ctx.lineTo(cx + g.neckW + 30, g.shoulderY - 16);
  ctx.closePath();
  ctx.fillStyle = inner;
  ctx.fill();
  if (p.outfit !== "shirt") {
    // Shirt collar points over the V.
    ctx.fillStyle = lighten(p.shirtColor, 0.2);
    ctx.strokeStyle = darken(p.shirtColor, 0.15);
    ctx.lineWidth = 2.5;
    for (const side of [-1, 1]) {
      ctx.beginPath();
      ctx.moveTo(cx + side * (g.neckW + 8), g.shoulderY - 44);
      ctx.lineTo(cx + side * (g.neckW + 44), g.shoulderY - 8);
      ctx.lineTo(cx + side * 14, g.shoulderY + 70);
      ctx.lineTo(cx + side * 4, g.shoulderY + 24);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
  } else {
    // An open shirt collar.
    ctx.fillStyle = lighten(main, 0.15);
    ctx.strokeStyle = darken(main, 0.16);
    ctx.lineWidth = 2.5;
    for (const side of [-1, 1]) {
      ctx.beginPath();
      ctx.moveTo(cx + side * (g.neckW - 2), g.shoulderY - 60);
      ctx.lineTo(cx + side * (g.neckW + 58), g.shoulderY - 6);
      ctx.lineTo(cx + side * 22, g.shoulderY + 96);
      ctx.lineTo(cx + side * 30, g.shoulderY + 10);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
    ctx.strokeStyle = darken(main, 0.12);
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.moveTo(cx, g.shoulderY + depth);
    ctx.lineTo(cx, DESIGN_HEIGHT);
    ctx.stroke();
  }
  if (p.outfit === "blazer") {
    // Lapels with a shadow line.
    const lapel = darken(main, 0.1);
    for (const side of [-1, 1]) {
      ctx.beginPath();
      ctx.moveTo(cx + side * (g.neckW + 34), g.shoulderY - 14);
      ctx.lineTo(cx + side * (g.neckW + 96), g.shoulderY + 40);
      ctx.lineTo(cx + side * (g.neckW + 70), g.shoulderY + 90);
      ctx.lineTo(cx + side * 10, g.shoulderY + depth + 40);
      ctx.lineTo(cx + side * 4, g.shoulderY + depth);
      ctx.closePath();
      ctx.fillStyle = lapel;
      ctx.fill();
      ctx.strokeStyle = darken(main, 0.3);
      ctx.lineWidth = 3;
      ctx.stroke();
    }
  }
  if (p.outfit === "vneck") {
    ctx.strokeStyle = darken(main, 0.18);
    ctx.lineWidth = 12;
    ctx.beginPath();
    ctx.moveTo(cx - g.neckW - 34, g.shoulderY - 14);
    ctx.lineTo(cx, g.shoulderY + depth);
    ctx.lineTo(cx + g.neckW + 34, g.shoulderY - 14);
    ctx.stroke();
  }
}

function drawTurtleneck(ctx: SKRSContext2D, g: Geometry, color: string): void {
  const { cx } = g;
  torsoPath(ctx, g, 10);
  fillCloth(ctx, g, color);
  // The rolled collar around the neck.
  ctx.beginPath();
  ctx.moveTo(cx - g.neckW - 8, g.neckTop + 120);
  ctx.bezierCurveTo(
    cx - g.neckW - 14,
    g.shoulderY - 40,
    cx - g.neckW - 30,
    g.shoulderY,
    cx - g.neckW - 40,
    g.shoulderY + 8,
  );
  ctx.bezierCurveTo(cx - 30, g.shoulderY + 40, cx + 30, g.shoulderY + 40, cx + g.neckW + 40, g.shoulderY + 8);
  ctx.bezierCurveTo(
    cx + g.neckW + 30,
    g.shoulderY,
    cx + g.neckW + 14,
    g.shoulderY - 40,
    cx + g.neckW + 8,
    g.neckTop + 120,
  );
  ctx.bezierCurveTo(cx + 20, g.neckTop + 140, cx - 20, g.neckTop + 140, cx - g.neckW - 8, g.neckTop + 120);
  ctx.closePath();
  const roll = ctx.createLinearGradient(0, g.neckTop + 120, 0, g.shoulderY + 30);
  roll.addColorStop(0, darken(color, 0.15));
  roll.addColorStop(0.4, lighten(color, 0.05));
  roll.addColorStop(1, darken(color, 0.12));
  ctx.fillStyle = roll;
  ctx.fill();
  ctx.strokeStyle = alpha(darken(color, 0.35), 0.35);
  ctx.lineWidth = 3;
  for (let i = -3; i <= 3; i++) {
    ctx.beginPath();
    ctx.moveTo(cx + i * 22, g.neckTop + 132);
    ctx.lineTo(cx + i * 26, g.shoulderY + 24);
    ctx.stroke();
  }
}
