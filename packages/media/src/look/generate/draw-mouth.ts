import type { SKRSContext2D } from "@napi-rs/canvas";
import type { Viseme } from "../visemes.js";
import { alpha, darken, lighten, mix } from "./color.js";
import type { Geometry } from "./geometry.js";
import { type LookParams, SKIN_TONES } from "./vocabulary.js";

/**
 * Mouth shapes: lips around an opening whose width, height and roundness follow the viseme, with teeth
 * and tongue where that sound shows them. Each shape is one sprite; a viseme may come in several
 * openings (the renderer picks the one nearest the voice's loudness).
 */

export interface MouthShape {
  viseme: Viseme;
  openness: number;
  /** Half width of the mouth, design units. */
  halfWidth: number;
  /** Height of the opening between the lips. */
  gap: number;
  /** 0 spread, 1 round. */
  round: number;
  upperTeeth: boolean;
  lowerTeeth: boolean;
  tongue: "none" | "low" | "up";
  /** Corners lifted (a light smile). */
  smile: number;
  /** Lower lip tucked under the upper teeth (f, v). */
  tucked?: boolean;
  pressed?: boolean;
}

export const MOUTH_SHAPES: MouthShape[] = [
  {
    viseme: "rest",
    openness: 0,
    halfWidth: 50,
    gap: 0,
    round: 0,
    upperTeeth: false,
    lowerTeeth: false,
    tongue: "none",
    smile: 5,
  },
  {
    viseme: "MBP",
    openness: 0,
    halfWidth: 47,
    gap: 0,
    round: 0,
    upperTeeth: false,
    lowerTeeth: false,
    tongue: "none",
    smile: 1,
    pressed: true,
  },
  {
    viseme: "FV",
    openness: 0.15,
    halfWidth: 48,
    gap: 9,
    round: 0,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "none",
    smile: 2,
    tucked: true,
  },
  {
    viseme: "etc",
    openness: 0.25,
    halfWidth: 52,
    gap: 11,
    round: 0.1,
    upperTeeth: true,
    lowerTeeth: true,
    tongue: "none",
    smile: 3,
  },
  {
    viseme: "L",
    openness: 0.4,
    halfWidth: 48,
    gap: 24,
    round: 0.3,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "up",
    smile: 2,
  },
  {
    viseme: "WQ",
    openness: 0.3,
    halfWidth: 30,
    gap: 14,
    round: 1,
    upperTeeth: false,
    lowerTeeth: false,
    tongue: "none",
    smile: 0,
  },
  {
    viseme: "O",
    openness: 0.5,
    halfWidth: 36,
    gap: 30,
    round: 0.85,
    upperTeeth: false,
    lowerTeeth: false,
    tongue: "low",
    smile: 0,
  },
  {
    viseme: "O",
    openness: 0.8,
    halfWidth: 38,
    gap: 44,
    round: 0.85,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "low",
    smile: 0,
  },
  {
    viseme: "E",
    openness: 0.35,
    halfWidth: 56,
    gap: 13,
    round: 0,
    upperTeeth: true,
    lowerTeeth: true,
    tongue: "none",
    smile: 4,
  },
  {
    viseme: "E",
    openness: 0.6,
    halfWidth: 56,
    gap: 24,
    round: 0.1,
    upperTeeth: true,
    lowerTeeth: true,
    tongue: "low",
    smile: 3,
  },
  {
    viseme: "AI",
    openness: 0.55,
    halfWidth: 50,
    gap: 28,
    round: 0.35,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "low",
    smile: 2,
  },
  {
    viseme: "AI",
    openness: 0.8,
    halfWidth: 51,
    gap: 40,
    round: 0.4,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "low",
    smile: 1,
  },
  {
    viseme: "AI",
    openness: 1,
    halfWidth: 52,
    gap: 52,
    round: 0.45,
    upperTeeth: true,
    lowerTeeth: false,
    tongue: "low",
    smile: 0,
  },
];

/** Sprite box around the mouth, design units (room for the widest, most open shape and the lips). */
export const MOUTH_BOX = { width: 160, height: 110 };

export function drawMouth(ctx: SKRSContext2D, p: LookParams, g: Geometry, s: MouthShape): void {
  const skin = SKIN_TONES[p.skinTone];
  const fem = p.presentation === "feminine";
  const lip = mix(skin, fem ? "#b4505e" : "#a85a5a", fem ? 0.55 : 0.4);
  const x = g.cx;
  const y = g.mouthY;
  const w = s.halfWidth;
  const upperThick = s.pressed ? 7 : fem ? 13 : 10;
  const lowerThick = (s.pressed ? 9 : fem ? 16 : 13) * (s.tucked ? 0.8 : 1);
  const gapTop = y - s.gap * 0.35;
  const gapBottom = y + s.gap * 0.65;
  const cornerY = y - s.smile;
  // Lips meet at the corners; rounded shapes purse them, so the opening is narrower than the lips.
  const wi = w * (0.94 - 0.3 * s.round);
  const top = 0.55 - 0.25 * s.round;
  const bottom = 0.62 - 0.28 * s.round;

  // The opening's edges, shared by the opening and the lips so that nothing shows between them.
  const innerTop = (from: -1 | 1) => {
    ctx.bezierCurveTo(
      x + from * wi * top,
      gapTop - s.round * 4,
      x - from * wi * top,
      gapTop - s.round * 4,
      x - from * wi,
      cornerY,
    );
  };
  const innerBottom = (from: -1 | 1) => {
    ctx.bezierCurveTo(
      x + from * wi * bottom,
      gapBottom + s.round * 6,
      x - from * wi * bottom,
      gapBottom + s.round * 6,
      x - from * wi,
      cornerY,
    );
  };
  const opening = () => {
    ctx.beginPath();
    ctx.moveTo(x - wi, cornerY);
    innerTop(-1);
    innerBottom(1);
    ctx.closePath();
  };

  // Soft shadow under the lower lip.
  ctx.save();
  ctx.translate(x, gapBottom + lowerThick + 8);
  ctx.scale(1, 0.3);
  const shadow = ctx.createRadialGradient(0, 0, 2, 0, 0, w * 0.8);
  shadow.addColorStop(0, alpha(darken(skin, 0.4), 0.22));
  shadow.addColorStop(1, alpha(darken(skin, 0.4), 0));
  ctx.fillStyle = shadow;
  ctx.fillRect(-w, -w, 2 * w, 2 * w);
  ctx.restore();

  if (s.gap > 0) {
    opening();
    ctx.fillStyle = "#3a1418";
    ctx.fill();
    ctx.save();
    opening();
    ctx.clip();
    if (s.tongue !== "none") {
      ctx.fillStyle = "#b9505a";
      ctx.beginPath();
      if (s.tongue === "low")
        ctx.ellipse(x, gapBottom + 2, w * 0.6, Math.max(6, s.gap * 0.32), 0, 0, Math.PI * 2);
      else ctx.ellipse(x, gapTop + s.gap * 0.35, w * 0.35, s.gap * 0.35, 0, 0, Math.PI * 2);
      ctx.fill();
    }
    const upperTeeth = s.tucked ? s.gap + 4 : Math.min(12, s.gap * 0.55);
    if (s.upperTeeth) {
      ctx.fillStyle = "#f4f0ea";
      ctx.fillRect(x - w, gapTop - 6, 2 * w, upperTeeth + 6);
      // The teeth's lower edge in shade toward the corners.
      const edge = ctx.createLinearGradient(x - wi, 0, x + wi, 0);
      edge.addColorStop(0, alpha("#6a5550", 0.5));
      edge.addColorStop(0.3, alpha("#6a5550", 0));
      edge.addColorStop(0.7, alpha("#6a5550", 0));
      edge.addColorStop(1, alpha("#6a5550", 0.5));
      ctx.fillStyle = edge;
      ctx.fillRect(x - w, gapTop - 6, 2 * w, upperTeeth + 6);
    }
    if (s.lowerTeeth) {
      ctx.fillStyle = "#e6dfd8";
      ctx.fillRect(x - w, gapBottom - Math.min(9, s.gap * 0.4), 2 * w, 12);
    }
    ctx.restore();
  }

  // Upper lip: the cupid's bow above, the opening's top edge below.
  ctx.beginPath();
  ctx.moveTo(x - w, cornerY);
  ctx.bezierCurveTo(
    x - w * 0.6,
    gapTop - upperThick * 0.9,
    x - w * 0.3,
    gapTop - upperThick * 1.25,
    x - w * 0.12,
    gapTop - upperThick * 1.15,
  );
  ctx.quadraticCurveTo(x, gapTop - upperThick * 0.75, x + w * 0.12, gapTop - upperThick * 1.15);
  ctx.bezierCurveTo(
    x + w * 0.3,
    gapTop - upperThick * 1.25,
    x + w * 0.6,
    gapTop - upperThick * 0.9,
    x + w,
    cornerY,
  );
  ctx.lineTo(x + wi, cornerY);
  innerTop(1);
  ctx.closePath();
  const upper = ctx.createLinearGradient(0, gapTop - upperThick * 1.2, 0, gapTop);
  upper.addColorStop(0, darken(lip, 0.06));
  upper.addColorStop(1, darken(lip, 0.2));
  ctx.fillStyle = upper;
  ctx.fill();
  ctx.strokeStyle = alpha(darken(lip, 0.35), 0.35);
  ctx.lineWidth = 1.5;
  ctx.stroke();

  // Lower lip, fuller, from the opening's bottom edge down, with a highlight.
  ctx.beginPath();
  ctx.moveTo(x - w, cornerY);
  ctx.lineTo(x - wi, cornerY);
  innerBottom(-1);
  ctx.lineTo(x + w, cornerY);
  ctx.bezierCurveTo(
    x + w * 0.7,
    gapBottom + lowerThick * 1.35,
    x - w * 0.7,
    gapBottom + lowerThick * 1.35,
    x - w,
    cornerY,
  );
  ctx.closePath();
  const lower = ctx.createLinearGradient(0, gapBottom, 0, gapBottom + lowerThick);
  lower.addColorStop(0, lip);
  lower.addColorStop(1, darken(lip, 0.1));
  ctx.fillStyle = lower;
  ctx.fill();
  ctx.strokeStyle = alpha(darken(lip, 0.35), 0.3);
  ctx.lineWidth = 1.5;
  ctx.stroke();
  ctx.fillStyle = alpha(lighten(lip, 0.5), 0.3);
  ctx.beginPath();
  ctx.ellipse(x - w * 0.12, gapBottom + lowerThick * 0.45, w * 0.26, lowerThick * 0.16, 0, 0, Math.PI * 2);
  ctx.fill();

  if (s.gap === 0) {
    // The line where closed lips meet.
    ctx.strokeStyle = darken(lip, s.pressed ? 0.55 : 0.45);
    ctx.lineWidth = s.pressed ? 3.5 : 3;
    ctx.lineCap = "round";
    ctx.beginPath();
    ctx.moveTo(x - wi, cornerY);
    innerTop(-1);
    ctx.stroke();
  }
  // Soft dimples just outside the corners.
  for (const side of [-1, 1]) {
    const dimple = ctx.createRadialGradient(x + side * (w + 1), cornerY, 0, x + side * (w + 1), cornerY, 6);
    dimple.addColorStop(0, alpha(darken(skin, 0.45), 0.35));
    dimple.addColorStop(1, alpha(darken(skin, 0.45), 0));
    ctx.fillStyle = dimple;
    ctx.fillRect(x + side * (w + 1) - 6, cornerY - 6, 12, 12);
  }
}
