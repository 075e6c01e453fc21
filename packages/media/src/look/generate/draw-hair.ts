import type { SKRSContext2D } from "@napi-rs/canvas";
import { seededRandom } from "../../random.js";
import { alpha, darken, lighten } from "./color.js";
import type { Geometry } from "./geometry.js";
import { HAIR_COLORS, type LookParams } from "./vocabulary.js";

/**
 * Hair in two parts: what falls behind the face (drawn first in the head layer) and what frames it
 * (drawn over the face). Shaded with a gradient and a few lighter strands so it reads as hair, not a cap.
 */

function hairFill(ctx: SKRSContext2D, p: LookParams, g: Geometry, top: number, bottom: number): void {
  const color = HAIR_COLORS[p.hairColor];
  const grad = ctx.createLinearGradient(g.cx - 160, top, g.cx + 160, bottom);
  grad.addColorStop(0, lighten(color, 0.12));
  grad.addColorStop(0.5, color);
  grad.addColorStop(1, darken(color, 0.25));
  ctx.fillStyle = grad;
}

function strands(
  ctx: SKRSContext2D,
  p: LookParams,
  g: Geometry,
  paths: [number, number, number, number, number, number, number, number][],
): void {
  ctx.strokeStyle = alpha(lighten(HAIR_COLORS[p.hairColor], 0.35), 0.35);
  ctx.lineWidth = 3;
  ctx.lineCap = "round";
  for (const [x0, y0, c1x, c1y, c2x, c2y, x1, y1] of paths) {
    ctx.beginPath();
    ctx.moveTo(g.cx + x0, y0);
    ctx.bezierCurveTo(g.cx + c1x, c1y, g.cx + c2x, c2y, g.cx + x1, y1);
    ctx.stroke();
  }
}

export function drawHairBack(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const { cx } = g;
  if (p.hairStyle === "long") {
    ctx.beginPath();
    ctx.moveTo(cx, g.skullTop - 34);
    ctx.bezierCurveTo(cx + 190, g.skullTop - 30, cx + 205, g.eyeY, cx + 200, g.jawY + 60);
    ctx.bezierCurveTo(cx + 205, g.shoulderY + 40, cx + 230, g.shoulderY + 80, cx + 215, g.shoulderY + 110);
    ctx.lineTo(cx - 215, g.shoulderY + 110);
    ctx.bezierCurveTo(cx - 230, g.shoulderY + 80, cx - 205, g.shoulderY + 40, cx - 200, g.jawY + 60);
    ctx.bezierCurveTo(cx - 205, g.eyeY, cx - 190, g.skullTop - 30, cx, g.skullTop - 34);
    ctx.closePath();
    hairFill(ctx, p, g, g.skullTop, g.shoulderY);
    ctx.fill();
    ctx.fillStyle = alpha("#000000", 0.18);
    ctx.fill();
  } else if (p.hairStyle === "bob") {
    ctx.beginPath();
    ctx.moveTo(cx, g.skullTop - 36);
    ctx.bezierCurveTo(cx + 200, g.skullTop - 30, cx + 200, g.eyeY + 40, cx + 190, g.jawY + 40);
    ctx.quadraticCurveTo(cx + 180, g.chinY + 10, cx + 120, g.chinY + 4);
    ctx.lineTo(cx - 120, g.chinY + 4);
    ctx.quadraticCurveTo(cx - 180, g.chinY + 10, cx - 190, g.jawY + 40);
    ctx.bezierCurveTo(cx - 200, g.eyeY + 40, cx - 200, g.skullTop - 30, cx, g.skullTop - 36);
    ctx.closePath();
    hairFill(ctx, p, g, g.skullTop, g.chinY);
    ctx.fill();
    ctx.fillStyle = alpha("#000000", 0.2);
    ctx.fill();
  } else if (p.hairStyle === "curls") {
    const random = seededRandom(`curls-back:${p.seed}`);
    hairFill(ctx, p, g, g.skullTop - 80, g.jawY + 80);
    for (let i = 0; i < 70; i++) {
      // Upper half and the sides down to the jaw, never under the chin.
      const a = Math.PI * (0.92 + random() * 1.16);
      const r = 175 + random() * 45;
      ctx.beginPath();
      ctx.arc(
        cx + Math.cos(a) * r * 1.08,
        g.eyeY - 40 + Math.sin(a) * r * 0.95,
        30 + random() * 16,
        0,
        Math.PI * 2,
      );
      ctx.fill();
    }
    ctx.beginPath();
    ctx.ellipse(cx, g.eyeY - 40, 205, 190, 0, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = alpha("#000000", 0.15);
    ctx.fill();
  } else if (p.hairStyle === "bun") {
    ctx.beginPath();
    ctx.arc(cx, g.skullTop - 40, 62, 0, Math.PI * 2);
    hairFill(ctx, p, g, g.skullTop - 100, g.skullTop + 20);
    ctx.fill();
    strands(ctx, p, g, [
      [-40, g.skullTop - 60, -20, g.skullTop - 90, 20, g.skullTop - 90, 40, g.skullTop - 60],
      [-30, g.skullTop - 30, -10, g.skullTop - 60, 20, g.skullTop - 60, 44, g.skullTop - 36],
    ]);
  }
}

export function drawHairFront(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const { cx } = g;
  const t = g.skullTop;
  switch (p.hairStyle) {
    case "crop":
    case "sidepart":
    case "curlytop": {
      ctx.beginPath();
      ctx.moveTo(cx - g.templeW - 6, g.eyeY - 40);
      ctx.bezierCurveTo(cx - g.templeW - 20, t - 10, cx - 90, t - 50, cx, t - 52);
      ctx.bezierCurveTo(cx + 100, t - 54, cx + g.templeW + 24, t - 10, cx + g.templeW + 6, g.eyeY - 40);
      if (p.hairStyle === "sidepart") {
        ctx.bezierCurveTo(cx + 140, t + 50, cx + 60, t + 40, cx - 40, t + 62);
        ctx.bezierCurveTo(cx - 90, t + 70, cx - 130, t + 90, cx - g.templeW - 6, g.eyeY - 40);
      } else {
        ctx.bezierCurveTo(cx + 130, t + 50, cx + 60, t + 46, cx, t + 48);
        ctx.bezierCurveTo(cx - 60, t + 46, cx - 130, t + 50, cx - g.templeW - 6, g.eyeY - 40);
      }
      ctx.closePath();
      hairFill(ctx, p, g, t - 50, t + 60);
      ctx.fill();
      if (p.hairStyle === "curlytop") {
        const random = seededRandom(`curlytop:${p.seed}`);
        for (let i = 0; i < 40; i++) {
          const a = Math.PI * (1.05 + random() * 0.9);
          ctx.beginPath();
          ctx.arc(
            cx + Math.cos(a) * (130 + random() * 20),
            g.eyeY - 90 + Math.sin(a) * 150,
            16 + random() * 10,
            0,
            Math.PI * 2,
          );
          ctx.fill();
        }
      } else {
        strands(ctx, p, g, [
          [-110, t + 20, -60, t - 20, 20, t - 30, 90, t - 10],
          [-80, t + 40, -30, t + 5, 50, t, 120, t + 20],
          [-130, t + 60, -100, t + 10, -40, t - 10, 10, t - 20],
        ]);
      }
      // Sideburns.
      ctx.fillStyle = darken(HAIR_COLORS[p.hairColor], 0.05);
      for (const side of [-1, 1]) {
        ctx.beginPath();
        ctx.moveTo(cx + side * (g.templeW + 6), g.eyeY - 60);
        ctx.lineTo(cx + side * (g.templeW - 6), g.eyeY + 10);
        ctx.lineTo(cx + side * (g.templeW - 16), g.eyeY + 10);
        ctx.lineTo(cx + side * (g.templeW - 10), g.eyeY - 60);
        ctx.closePath();
        ctx.fill();
      }
      return;
    }
    case "buzz": {
      ctx.beginPath();
      ctx.moveTo(cx - g.templeW - 2, g.eyeY - 50);
      ctx.bezierCurveTo(cx - g.templeW - 8, t - 6, cx - 90, t - 22, cx, t - 24);
      ctx.bezierCurveTo(cx + 90, t - 22, cx + g.templeW + 8, t - 6, cx + g.templeW + 2, g.eyeY - 50);
      ctx.bezierCurveTo(cx + 120, t + 40, cx + 60, t + 34, cx, t + 36);
      ctx.bezierCurveTo(cx - 60, t + 34, cx - 120, t + 40, cx - g.templeW - 2, g.eyeY - 50);
      ctx.closePath();
      hairFill(ctx, p, g, t, t + 40);
      ctx.globalAlpha = 0.9;
      ctx.fill();
      ctx.globalAlpha = 1;
      return;
    }
    case "long":
    case "bob": {
      // Crown and a parted fringe that frames the face down the sides.
      const sideDrop = p.hairStyle === "long" ? g.jawY + 90 : g.jawY + 40;
      for (const side of [-1, 1]) {
        ctx.beginPath();
        ctx.moveTo(cx - side * 30, t - 40);
        ctx.bezierCurveTo(
          cx + side * 120,
          t - 44,
          cx + side * (g.templeW + 34),
          t + 20,
          cx + side * (g.templeW + 30),
          g.eyeY,
        );
        ctx.bezierCurveTo(
          cx + side * (g.templeW + 34),
          g.jawY - 20,
          cx + side * (g.cheekW + 30),
          sideDrop - 40,
          cx + side * (g.cheekW + 44),
          sideDrop,
        );
        ctx.bezierCurveTo(
          cx + side * (g.cheekW + 10),
          sideDrop - 30,
          cx + side * (g.cheekW - 2),
          g.jawY - 40,
          cx + side * (g.templeW - 8),
          g.eyeY - 40,
        );
        ctx.bezierCurveTo(
          cx + side * (g.templeW - 20),
          t + 60,
          cx + side * 70,
          t + 30,
          cx - side * 30 + side * 40,
          t + 20,
        );
        ctx.closePath();
        hairFill(ctx, p, g, t - 40, sideDrop);
        ctx.fill();
      }
      strands(ctx, p, g, [
        [10, t - 30, 80, t - 20, 140, t + 30, 160, g.eyeY - 10],
        [-10, t - 30, -80, t - 20, -140, t + 30, -160, g.eyeY - 10],
        [30, t - 20, 100, t + 10, 130, t + 60, 140, g.eyeY - 40],
      ]);
      return;
    }
    case "bun": {
      ctx.beginPath();
      ctx.moveTo(cx - g.templeW - 4, g.eyeY - 30);
      ctx.bezierCurveTo(cx - g.templeW - 14, t - 10, cx - 90, t - 40, cx, t - 40);
      ctx.bezierCurveTo(cx + 90, t - 40, cx + g.templeW + 14, t - 10, cx + g.templeW + 4, g.eyeY - 30);
      ctx.bezierCurveTo(cx + 130, t + 40, cx + 60, t + 24, cx, t + 26);
      ctx.bezierCurveTo(cx - 60, t + 24, cx - 130, t + 40, cx - g.templeW - 4, g.eyeY - 30);
      ctx.closePath();
      hairFill(ctx, p, g, t - 40, t + 30);
      ctx.fill();
      strands(ctx, p, g, [
        [-120, t + 20, -80, t - 20, -30, t - 34, 0, t - 36],
        [120, t + 20, 80, t - 20, 30, t - 34, 0, t - 36],
      ]);
      return;
    }
    case "curls": {
      const random = seededRandom(`curls-front:${p.seed}`);
      hairFill(ctx, p, g, t - 60, t + 60);
      for (let i = 0; i < 46; i++) {
        const x = -g.templeW - 10 + random() * (2 * g.templeW + 20);
        const dome = Math.sqrt(Math.max(0, 1 - (x / (g.templeW + 30)) ** 2));
        ctx.beginPath();
        ctx.arc(cx + x, t + 30 - dome * 70 + random() * 30, 24 + random() * 12, 0, Math.PI * 2);
        ctx.fill();
      }
      for (const side of [-1, 1]) {
        for (let i = 0; i < 8; i++) {
          ctx.beginPath();
          ctx.arc(
            cx + side * (g.templeW + 8 + random() * 20),
            g.eyeY - 80 + i * 26,
            22 + random() * 8,
            0,
            Math.PI * 2,
          );
          ctx.fill();
        }
      }
      return;
    }
  }
}
