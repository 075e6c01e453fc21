import { type AvatarLook, AvatarLookSchema, LookSpriteSchema } from "@avatar/contracts/catalog";
import { create } from "@bufbuild/protobuf";
import { createCanvas, type SKRSContext2D } from "@napi-rs/canvas";
import { canvasToPng } from "../png.js";
import { EYE_STATES } from "../visemes.js";
import { drawBackground } from "./draw-background.js";
import { drawBody } from "./draw-body.js";
import { drawBrows, drawEars, drawEyes, drawFace, eyeMask, skinFill } from "./draw-face.js";
import { drawHairBack, drawHairFront } from "./draw-hair.js";
import { drawMouth, MOUTH_BOX, MOUTH_SHAPES } from "./draw-mouth.js";
import { DESIGN_HEIGHT, DESIGN_WIDTH, facePath, type Geometry, geometryOf } from "./geometry.js";
import { type LookParams, type LookRequest, resolveLookParams } from "./vocabulary.js";

/**
 * Generates a look: an illustrated person, deterministic from a seed (and optional choices), with a
 * mouth for every viseme and blink frames that fit that face. No artwork from anyone else: every pixel
 * is drawn here with Skia (@napi-rs/canvas).
 */

/** Design units to pixels: 1.5 gives a 1536 x 2100 figure canvas, sharp up to 1080p. */
export const DEFAULT_LOOK_SCALE = 1.5;

export function generateLook(request: LookRequest, scale = DEFAULT_LOOK_SCALE): AvatarLook {
  const params = resolveLookParams(request);
  const g = geometryOf(params);
  const width = Math.round(DESIGN_WIDTH * scale);
  const height = Math.round(DESIGN_HEIGHT * scale);
  const layer = (draw: (ctx: SKRSContext2D) => void) => {
    const canvas = createCanvas(width, height);
    const ctx = canvas.getContext("2d");
    ctx.scale(scale, scale);
    draw(ctx);
    return canvasToPng(canvas);
  };
  const eyeBox = { width: 2 * (g.eyeDx + g.eyeW), height: g.eyeH * 3.4 };
  return create(AvatarLookSchema, {
    width,
    height,
    backgroundPng: drawBackground(params, 0.75),
    bodyPng: layer((ctx) => drawBody(ctx, params, g)),
    headPng: layer((ctx) => drawHead(ctx, params, g)),
    mouths: MOUTH_SHAPES.map((shape) =>
      create(LookSpriteSchema, {
        name: shape.viseme,
        openness: shape.openness,
        png: sprite(scale, MOUTH_BOX, g.cx, g.mouthY, (ctx) => drawMouth(ctx, params, g, shape)),
      }),
    ),
    eyes: EYE_STATES.map((state) =>
      create(LookSpriteSchema, {
        name: state,
        png: sprite(
          scale,
          eyeBox,
          g.cx,
          g.eyeY,
          (ctx) => {
            facePath(ctx, g);
            skinFill(ctx, params, g);
            ctx.fill();
            drawBrows(ctx, params, g);
            drawEyes(ctx, params, g, state);
          },
          (ctx) => eyeMask(ctx, g),
        ),
      }),
    ),
    anchors: {
      mouth: { x: g.cx * scale, y: g.mouthY * scale },
      eyes: { x: g.cx * scale, y: g.eyeY * scale },
      headPivot: { x: g.cx * scale, y: g.pivotY * scale },
    },
  });
}

function drawHead(ctx: SKRSContext2D, p: LookParams, g: Geometry): void {
  drawHairBack(ctx, p, g);
  drawEars(ctx, p, g);
  drawFace(ctx, p, g);
  drawEyes(ctx, p, g, "open");
  drawHairFront(ctx, p, g);
}

/** A sprite centred on (cx, cy) in design units; `mask`, when given, keeps only what it covers. */
function sprite(
  scale: number,
  box: { width: number; height: number },
  cx: number,
  cy: number,
  draw: (ctx: SKRSContext2D) => void,
  mask?: (ctx: SKRSContext2D) => void,
): Buffer {
  const w = Math.round(box.width * scale);
  const h = Math.round(box.height * scale);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext("2d");
  const toDesign = (c: SKRSContext2D) => {
    c.translate(w / 2, h / 2);
    c.scale(scale, scale);
    c.translate(-cx, -cy);
  };
  ctx.save();
  toDesign(ctx);
  draw(ctx);
  ctx.restore();
  if (mask) {
    const maskCanvas = createCanvas(w, h);
    const m = maskCanvas.getContext("2d");
    toDesign(m);
    mask(m);
    ctx.globalCompositeOperation = "destination-in";
    ctx.drawImage(maskCanvas, 0, 0);
  }
  return canvasToPng(canvas);
}
