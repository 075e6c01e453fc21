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

/** The hair behind the head, in shadow: the same colours wherever it is drawn, so its parts join unseen. */
function backHairFill(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  hairFill(ctx, p, g, g.skullTop, g.shoulderY);
  ctx.fill();
  ctx.fillStyle = alpha("#000000", 0.2);
  ctx.fill();
}

/**
 * Long hair behind the neck and shoulders: the first thing of the body layer, so the neck and clothes
 * cover it. Its top stays inside what the head layer covers (face and locks) at every tilt.
 */
export function drawHairBehindBody(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  if (p.hairStyle !== "long") return;
  const { cx } = g;
  const w = g.cheekW + 28;
  ctx.beginPath();
  ctx.moveTo(cx - w, g.jawY - 60);
  ctx.lineTo(cx + w, g.jawY - 60);
  ctx.lineTo(cx + w + 12, g.shoulderY + 60);
  ctx.lineTo(cx - w - 12, g.shoulderY + 60);
  ctx.closePath();
  backHairFill(ctx, p, g);
  // Deeper shadow right behind the neck.
  const shade = ctx.createRadialGradient(cx, g.chinY + 40, 20, cx, g.chinY + 40, g.jawW + 40);
  shade.addColorStop(0, alpha("#000000", 0.3));
  shade.addColorStop(1, alpha("#000000", 0));
  ctx.fillStyle = shade;
  ctx.fill();
}

export function drawHairBack(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  const { cx } = g;
  if (p.hairStyle === "long") {
    // Around the skull down to the jaw; below that it falls behind the neck (drawHairBehindBody).
    ctx.beginPath();
    ctx.moveTo(cx, g.skullTop - 37);
    ctx.bezierCurveTo(cx + 192, g.skullTop - 33, cx + 198, g.eyeY, cx + g.cheekW + 30, g.jawY + 40);
    ctx.quadraticCurveTo(cx + g.jawW + 30, g.jawY + 64, cx + g.jawW - 10, g.jawY + 30);
    ctx.lineTo(cx - g.jawW + 10, g.jawY + 30);
    ctx.quadraticCurveTo(cx - g.jawW - 30, g.jawY + 64, cx - g.cheekW - 30, g.jawY + 40);
    ctx.bezierCurveTo(cx - 198, g.eyeY, cx - 192, g.skullTop - 33, cx, g.skullTop - 37);
    ctx.closePath();
    backHairFill(ctx, p, g);
  } else if (p.hairStyle === "bob") {
    // Down to the jaw, its ends tucked in under the jaw's corners (never across the neck).
    ctx.beginPath();
    ctx.moveTo(cx, g.skullTop - 37);
    ctx.bezierCurveTo(cx + 200, g.skullTop - 30, cx + 200, g.eyeY + 40, cx + g.cheekW + 40, g.jawY + 44);
    ctx.quadraticCurveTo(cx + g.jawW + 24, g.jawY + 76, cx + g.jawW - 10, g.jawY + 30);
    ctx.lineTo(cx - g.jawW + 10, g.jawY + 30);
    ctx.quadraticCurveTo(cx - g.jawW - 24, g.jawY + 76, cx - g.cheekW - 40, g.jawY + 44);
    ctx.bezierCurveTo(cx - 200, g.eyeY + 40, cx - 200, g.skullTop - 30, cx, g.skullTop - 37);
    ctx.closePath();
    hairFill(ctx, p, g, g.skullTop, g.chinY);
    ctx.fill();
    ctx.fillStyle = alpha("#000000", 0.2);
    ctx.fill();
  } else if (p.hairStyle === "curls") {
    const random = seededRandom(`curls-back:${p.seed}`);
    const curls: [number, number, number][] = [];
    for (let i = 0; i < 80; i++) {
      // Upper half and the sides down to the jaw, never under the chin.
      const a = Math.PI * (0.86 + random() * 1.28);
      const r = 175 + random() * 45;
      curls.push([cx + Math.cos(a) * r * 1.08, g.eyeY - 40 + Math.sin(a) * r * 0.95, 30 + random() * 16]);
    }
    hairFill(ctx, p, g, g.skullTop - 80, g.jawY + 80);
    ctx.beginPath();
    ctx.ellipse(cx, g.eyeY - 40, 205, 190, 0, 0, Math.PI * 2);
    ctx.fill();
    drawCurls(ctx, p, g, curls, 0.15);
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
      drawShortHair(ctx, p, g, p.hairStyle === "sidepart" ? 1 : 0);
      if (p.hairStyle === "curlytop") {
        const random = seededRandom(`curlytop:${p.seed}`);
        hairFill(ctx, p, g, t - 60, t + 60);
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
    case "long": {
      // Parted at the crown, framing the face, falling in front of the shoulders beside the neck.
      for (const side of [-1, 1]) {
        const X = (v: number) => cx + side * v;
        ctx.beginPath();
        ctx.moveTo(X(-30), t - 33);
        ctx.bezierCurveTo(X(120), t - 36, X(g.templeW + 34), t + 20, X(g.templeW + 30), g.eyeY);
        ctx.bezierCurveTo(
          X(g.templeW + 40),
          g.eyeY + 70,
          X(g.cheekW + 46),
          g.jawY - 20,
          X(g.cheekW + 50),
          g.jawY + 60,
        );
        ctx.bezierCurveTo(
          X(g.cheekW + 56),
          g.jawY + 140,
          X(g.cheekW + 70),
          g.shoulderY + 20,
          X(g.cheekW + 62),
          g.shoulderY + 100,
        );
        ctx.quadraticCurveTo(X(g.cheekW + 46), g.shoulderY + 150, X(g.jawW + 44), g.shoulderY + 156);
        ctx.quadraticCurveTo(X(g.jawW + 16), g.shoulderY + 120, X(g.jawW + 12), g.shoulderY + 40);
        ctx.bezierCurveTo(
          X(g.jawW + 6),
          g.shoulderY - 40,
          X(g.jawW + 16),
          g.chinY,
          X(g.jawW + 16),
          g.jawY + 20,
        );
        ctx.bezierCurveTo(
          X(g.cheekW - 6),
          g.jawY - 60,
          X(g.cheekW - 4),
          g.eyeY + 20,
          X(g.templeW - 8),
          g.eyeY - 40,
        );
        ctx.bezierCurveTo(X(g.templeW - 20), t + 60, X(70), t + 30, X(10), t + 20);
        ctx.closePath();
        hairFill(ctx, p, g, t - 40, g.shoulderY + 150);
        ctx.fill();
      }
      strands(ctx, p, g, [
        [10, t - 30, 80, t - 20, 140, t + 30, 160, g.eyeY - 10],
        [-10, t - 30, -80, t - 20, -140, t + 30, -160, g.eyeY - 10],
        [30, t - 20, 100, t + 10, 130, t + 60, 140, g.eyeY - 40],
        [
          g.cheekW + 20,
          g.eyeY + 40,
          g.cheekW + 30,
          g.jawY + 40,
          g.cheekW + 30,
          g.shoulderY,
          g.cheekW + 20,
          g.shoulderY + 110,
        ],
        [
          -g.cheekW - 24,
          g.eyeY + 60,
          -g.cheekW - 34,
          g.jawY + 60,
          -g.cheekW - 34,
          g.shoulderY,
          -g.cheekW - 28,
          g.shoulderY + 100,
        ],
      ]);
      return;
    }
    case "bob": {
      // Crown and a parted fringe that frames the face down the sides.
      const sideDrop = g.jawY + 40;
      for (const side of [-1, 1]) {
        ctx.beginPath();
        ctx.moveTo(cx - side * 30, t - 33);
        ctx.bezierCurveTo(
          cx + side * 120,
          t - 36,
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
      const curls: [number, number, number][] = [];
      for (let i = 0; i < 46; i++) {
        const x = -g.templeW - 10 + random() * (2 * g.templeW + 20);
        const dome = Math.sqrt(Math.max(0, 1 - (x / (g.templeW + 30)) ** 2));
        curls.push([cx + x, t + 30 - dome * 70 + random() * 30, 24 + random() * 12]);
      }
      for (const side of [-1, 1]) {
        for (let i = 0; i < 5; i++) {
          curls.push([cx + side * (g.templeW + 16 + random() * 14), g.eyeY - 80 + i * 26, 22 + random() * 8]);
        }
      }
      drawCurls(ctx, p, g, curls, 0);
      return;
    }
  }
}

/**
 * Short hair with volume above the skull, sideburns in one piece with it and a natural hairline (a
 * little recessed at the temples); `part` 1 sweeps it from a side parting, 0 brushes it forward.
 */
function drawShortHair(ctx: SKRSContext2D, p: LookParams, g: Geometry, part: number): void {
  const { cx } = g;
  const t = g.skullTop;
  const rise = part ? 66 : 56;
  const side = g.templeW + 16;
  const burn = g.eyeY + 6;
  const outline = () => {
    ctx.beginPath();
    // Right sideburn, up the side with some volume, over the top, down to the left sideburn.
    ctx.moveTo(cx + g.templeW - 2, burn);
    ctx.lineTo(cx + g.templeW + 6, g.eyeY - 50);
    ctx.bezierCurveTo(cx + side + 8, t + 30, cx + 120, t - rise + 4, cx + 10 * part, t - rise);
    ctx.bezierCurveTo(cx - 110, t - rise + 2, cx - side - 8, t + 30, cx - g.templeW - 6, g.eyeY - 50);
    ctx.lineTo(cx - g.templeW + 2, burn);
    ctx.lineTo(cx - g.templeW + 16, burn);
    // The hairline: up beside the temple, a slight recess, across the forehead.
    ctx.lineTo(cx - g.templeW + 14, g.eyeY - 66);
    ctx.bezierCurveTo(cx - g.templeW + 20, t + 70, cx - 110, t + 58, cx - 80, t + 52);
    if (part) {
      // A fringe swept from the parting on the left across to the right.
      ctx.bezierCurveTo(cx - 40, t + 60, cx + 30, t + 72, cx + 90, t + 58);
    } else {
      ctx.bezierCurveTo(cx - 40, t + 54, cx + 40, t + 54, cx + 80, t + 52);
    }
    ctx.bezierCurveTo(cx + 110, t + 58, cx + g.templeW - 20, t + 70, cx + g.templeW - 14, g.eyeY - 66);
    ctx.lineTo(cx + g.templeW - 16, burn);
    ctx.closePath();
  };
  outline();
  hairFill(ctx, p, g, t - rise, t + 70);
  ctx.fill();
  // Shade toward the sides, light on the top.
  const round = ctx.createRadialGradient(cx - 30, t - 10, 20, cx, t + 40, side + 20);
  round.addColorStop(0, alpha(lighten(HAIR_COLORS[p.hairColor], 0.3), 0.25));
  round.addColorStop(0.6, alpha("#000000", 0));
  round.addColorStop(1, alpha("#000000", 0.25));
  ctx.fillStyle = round;
  ctx.fill();
  ctx.save();
  outline();
  ctx.clip();
  if (part) {
    // The parting and strands sweeping away from it.
    ctx.strokeStyle = alpha(darken(HAIR_COLORS[p.hairColor], 0.45), 0.7);
    ctx.lineWidth = 3;
    ctx.lineCap = "round";
    ctx.beginPath();
    ctx.moveTo(cx - 78, t + 48);
    ctx.quadraticCurveTo(cx - 84, t - 10, cx - 70, t - rise + 14);
    ctx.stroke();
    strands(ctx, p, g, [
      [-70, t + 30, -20, t - 10, 60, t - 20, 130, t + 20],
      [-66, t + 10, -10, t - 30, 70, t - 40, 150, t + 10],
      [-60, t + 50, 0, t + 20, 60, t + 20, 110, t + 50],
      [-90, t + 20, -110, t - 10, -130, t + 20, -150, t + 60],
    ]);
  } else {
    strands(ctx, p, g, [
      [-100, t - 20, -60, t - 40, -20, t - 30, 0, t + 30],
      [-30, t - 40, 0, t - 50, 30, t - 30, 40, t + 30],
      [60, t - 30, 90, t - 30, 110, t - 10, 120, t + 40],
      [-120, t + 20, -130, t, -140, t + 20, -146, t + 50],
    ]);
  }
  ctx.restore();
}

/** Curls as overlapping rounds, each with a lighter rim where the light falls, shaded by `shadow`. */
function drawCurls(
  ctx: SKRSContext2D,
  p: LookParams,
  g: Geometry,
  curls: [number, number, number][],
  shadow: number,
): void {
  const color = HAIR_COLORS[p.hairColor];
  for (const [x, y, r] of curls) {
    hairFill(ctx, p, g, g.skullTop - 80, g.jawY + 80);
    ctx.beginPath();
    ctx.arc(x, y, r, 0, Math.PI * 2);
    ctx.fill();
    if (shadow > 0) {
      ctx.fillStyle = alpha("#000000", shadow);
      ctx.fill();
    }
    ctx.strokeStyle = alpha(lighten(color, 0.35), 0.3);
    ctx.lineWidth = 3;
    ctx.lineCap = "round";
    ctx.beginPath();
    ctx.arc(x, y, r * 0.62, Math.PI * 1.05, Math.PI * 1.55);
    ctx.stroke();
  }
}
