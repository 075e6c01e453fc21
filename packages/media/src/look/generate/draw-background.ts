import { createCanvas, type SKRSContext2D } from "@napi-rs/canvas";
import { seededRandom } from "../../random.js";
import { canvasToPng } from "../png.js";
import { alpha, darken, lighten, mix } from "./color.js";
import type { LookParams } from "./vocabulary.js";

/**
 * The backdrop: a softly lit room or studio, out of focus as behind a real speaker (blurred shapes, bokeh,
 * a vignette), in colours that sit well behind a face. Square, so it covers both 16:9 and 9:16.
 */
export const BACKGROUND_SIZE = 1600;

const PALETTES: Record<LookParams["background"], string[][]> = {
  studio: [
    ["#dfe7ea", "#9fb4bd"],
    ["#ece3da", "#b9a594"],
    ["#e3e1ee", "#a5a2bd"],
  ],
  office: [
    ["#e9edf0", "#8d9aa5"],
    ["#efe9e1", "#a79886"],
  ],
  lounge: [
    ["#efe2d2", "#a98c6e"],
    ["#e4e6dc", "#8f9a80"],
  ],
  slate: [
    ["#5b6572", "#2c323a"],
    ["#4d5a57", "#262d2c"],
  ],
  sunset: [
    ["#f6dcc4", "#c98f78"],
    ["#f3d9d0", "#b98799"],
  ],
};

export function drawBackground(p: LookParams, scale: number): Buffer {
  const size = Math.round(BACKGROUND_SIZE * scale);
  const canvas = createCanvas(size, size);
  const ctx = canvas.getContext("2d");
  ctx.scale(scale, scale);
  const random = seededRandom(`background:${p.seed}`);
  const options = PALETTES[p.background];
  const [light, dark] = options[Math.floor(p.backdropHue * options.length)] as [string, string];
  const S = BACKGROUND_SIZE;

  const base = ctx.createRadialGradient(S * 0.42, S * 0.38, S * 0.05, S * 0.5, S * 0.5, S * 0.8);
  base.addColorStop(0, lighten(light, 0.25));
  base.addColorStop(0.55, light);
  base.addColorStop(1, dark);
  ctx.fillStyle = base;
  ctx.fillRect(0, 0, S, S);

  // The room is drawn sharp on its own canvas, then blurred once, as out of focus behind the speaker.
  const scene = createCanvas(size, size);
  const sceneCtx = scene.getContext("2d");
  sceneCtx.scale(scale, scale);
  if (p.background === "office") drawOffice(sceneCtx, light, dark, random);
  else if (p.background === "lounge") drawLounge(sceneCtx, light, dark, random);
  else if (p.background === "slate") drawBokeh(sceneCtx, "#ffd9a8", random, 0.16);
  else if (p.background === "sunset") drawBokeh(sceneCtx, "#fff1dc", random, 0.22);
  else drawStudioLight(sceneCtx, light);
  ctx.save();
  ctx.resetTransform();
  ctx.filter = `blur(${Math.round(18 * scale)}px)`;
  ctx.drawImage(scene, 0, 0);
  ctx.filter = "none";
  ctx.restore();

  const vignette = ctx.createRadialGradient(S / 2, S * 0.45, S * 0.35, S / 2, S / 2, S * 0.78);
  vignette.addColorStop(0, "rgba(0,0,0,0)");
  vignette.addColorStop(1, "rgba(0,0,0,0.22)");
  ctx.fillStyle = vignette;
  ctx.fillRect(0, 0, S, S);
  return canvasToPng(canvas);
}

function drawStudioLight(ctx: SKRSContext2D, light: string): void {
  const S = BACKGROUND_SIZE;
  const glow = ctx.createRadialGradient(S * 0.5, S * 0.4, 10, S * 0.5, S * 0.4, S * 0.45);
  glow.addColorStop(0, alpha(lighten(light, 0.6), 0.7));
  glow.addColorStop(1, alpha(light, 0));
  ctx.fillStyle = glow;
  ctx.fillRect(0, 0, S, S);
}

function drawOffice(ctx: SKRSContext2D, light: string, dark: string, random: () => number): void {
  const S = BACKGROUND_SIZE;
  // A bright window on one side, shelves with books and a plant on the other.
  const left = random() < 0.5;
  const wx = left ? S * 0.04 : S * 0.62;
  ctx.fillStyle = alpha(lighten(light, 0.75), 0.95);
  ctx.fillRect(wx, S * 0.12, S * 0.34, S * 0.5);
  ctx.fillStyle = alpha(darken(light, 0.12), 0.9);
  ctx.fillRect(wx + S * 0.165, S * 0.12, S * 0.012, S * 0.5);
  ctx.fillRect(wx, S * 0.36, S * 0.34, S * 0.012);
  const sx = left ? S * 0.66 : S * 0.05;
  for (let shelf = 0; shelf < 3; shelf++) {
    const y = S * (0.26 + shelf * 0.17);
    ctx.fillStyle = alpha(darken(dark, 0.25), 0.85);
    ctx.fillRect(sx, y, S * 0.3, S * 0.014);
    let x = sx + S * 0.01;
    while (x < sx + S * 0.27) {
      const w = S * (0.014 + random() * 0.02);
      const h = S * (0.07 + random() * 0.05);
      ctx.fillStyle = mix(
        ["#b5543c", "#39577a", "#d4b26a", "#4f7458", "#ece6da", "#7a4a6a"][
          Math.floor(random() * 6)
        ] as string,
        light,
        0.35,
      );
      ctx.fillRect(x, y - h, w, h);
      x += w + S * 0.004;
      if (random() < 0.12) x += S * 0.04;
    }
  }
  drawPlant(ctx, left ? S * 0.9 : S * 0.1, S * 0.85, random);
}

function drawLounge(ctx: SKRSContext2D, light: string, dark: string, random: () => number): void {
  const S = BACKGROUND_SIZE;
  // A lamp's warm glow, a framed picture and a plant.
  const lampX = random() < 0.5 ? S * 0.18 : S * 0.82;
  const glow = ctx.createRadialGradient(lampX, S * 0.35, 10, lampX, S * 0.35, S * 0.3);
  glow.addColorStop(0, "rgba(255,230,180,0.95)");
  glow.addColorStop(1, "rgba(255,230,180,0)");
  ctx.fillStyle = glow;
  ctx.fillRect(0, 0, S, S);
  ctx.fillStyle = alpha(lighten(light, 0.5), 0.9);
  ctx.beginPath();
  ctx.moveTo(lampX - S * 0.06, S * 0.36);
  ctx.lineTo(lampX + S * 0.06, S * 0.36);
  ctx.lineTo(lampX + S * 0.04, S * 0.28);
  ctx.lineTo(lampX - S * 0.04, S * 0.28);
  ctx.fill();
  ctx.fillStyle = alpha(darken(dark, 0.2), 0.8);
  ctx.fillRect(lampX - S * 0.006, S * 0.36, S * 0.012, S * 0.4);
  const frameX = lampX < S / 2 ? S * 0.62 : S * 0.12;
  ctx.fillStyle = alpha(darken(dark, 0.3), 0.7);
  ctx.fillRect(frameX, S * 0.16, S * 0.26, S * 0.2);
  ctx.fillStyle = alpha(mix(light, "#7a9cb8", 0.5), 0.9);
  ctx.fillRect(frameX + S * 0.015, S * 0.175, S * 0.23, S * 0.17);
  drawPlant(ctx, lampX < S / 2 ? S * 0.92 : S * 0.08, S * 0.9, random);
}

function drawPlant(ctx: SKRSContext2D, x: number, y: number, random: () => number): void {
  const S = BACKGROUND_SIZE;
  for (let i = 0; i < 14; i++) {
    const angle = -Math.PI / 2 + (random() - 0.5) * 2.2;
    const length = S * (0.12 + random() * 0.14);
    ctx.fillStyle = mix("#3f6b45", "#6f9c5c", random());
    ctx.beginPath();
    ctx.ellipse(
      x + Math.cos(angle) * length * 0.5,
      y - S * 0.12 + Math.sin(angle) * length * 0.5,
      length * 0.5,
      S * 0.022,
      angle,
      0,
      Math.PI * 2,
    );
    ctx.fill();
  }
  ctx.fillStyle = "#b9856a";
  ctx.fillRect(x - S * 0.05, y - S * 0.12, S * 0.1, S * 0.12);
}

function drawBokeh(ctx: SKRSContext2D, color: string, random: () => number, strength: number): void {
  const S = BACKGROUND_SIZE;
  for (let i = 0; i < 26; i++) {
    const r = S * (0.02 + random() * 0.05);
    ctx.fillStyle = alpha(color, strength * (0.4 + random() * 0.8));
    ctx.beginPath();
    ctx.arc(random() * S, random() * S * 0.8, r, 0, Math.PI * 2);
    ctx.fill();
  }
}
