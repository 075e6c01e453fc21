import type { AvatarLook } from "@avatar/contracts/catalog";
import { createCanvas, Image } from "@napi-rs/canvas";
import { LookError } from "./look-error.js";
import { pngDefect } from "./png.js";
import { EYE_STATES, type EyeState, VISEMES, type Viseme } from "./visemes.js";

/**
 * A look checked and decoded, ready to rasterize. `decodeLook` refuses a look the renderer cannot draw
 * with a LookError naming the field: a PNG that does not decode, a layer of the wrong size, a missing
 * viseme or eye state, an anchor outside the canvas, a background with transparent pixels.
 */

export interface Point {
  x: number;
  y: number;
}

export interface DecodedMouth {
  viseme: Viseme;
  openness: number;
  image: Image;
}

export interface DecodedLook {
  width: number;
  height: number;
  background: Image;
  body: Image;
  head: Image;
  mouths: DecodedMouth[];
  eyes: Record<EyeState, Image>;
  anchors: { mouth: Point; eyes: Point; headPivot: Point };
}

/** Largest figure canvas side accepted: larger looks would only cost memory. */
export const MAX_LOOK_SIDE = 4096;

export function decodeLook(look: AvatarLook): DecodedLook {
  const { width, height } = look;
  if (!(width >= 16 && height >= 16 && width <= MAX_LOOK_SIDE && height <= MAX_LOOK_SIDE)) {
    throw new LookError(
      "width",
      `the canvas must be 16 to ${MAX_LOOK_SIDE} pixels a side (got ${width}x${height})`,
    );
  }
  const background = decodePng(look.backgroundPng, "background_png");
  if (!isOpaque(background))
    throw new LookError("background_png", "must be opaque (it has transparent pixels)");
  const body = decodePng(look.bodyPng, "body_png", { width, height });
  const head = decodePng(look.headPng, "head_png", { width, height });

  const mouths = look.mouths.map((sprite, i): DecodedMouth => {
    const field = `mouths[${i}]`;
    if (!(VISEMES as readonly string[]).includes(sprite.name)) {
      throw new LookError(
        `${field}.name`,
        `unknown viseme "${sprite.name}" (visemes: ${VISEMES.join(", ")})`,
      );
    }
    if (!(sprite.openness >= 0 && sprite.openness <= 1)) {
      throw new LookError(`${field}.openness`, `must be between 0 and 1 (got ${sprite.openness})`);
    }
    return {
      viseme: sprite.name as Viseme,
      openness: sprite.openness,
      image: decodePng(sprite.png, `${field}.png`, { max: { width, height } }),
    };
  });
  const missing = VISEMES.filter((v) => !mouths.some((m) => m.viseme === v));
  if (missing.length > 0) throw new LookError("mouths", `missing visemes ${missing.join(", ")}`);

  const eyes = {} as Record<EyeState, Image>;
  for (const [i, sprite] of look.eyes.entries()) {
    if (!(EYE_STATES as readonly string[]).includes(sprite.name)) {
      throw new LookError(
        `eyes[${i}].name`,
        `unknown eye state "${sprite.name}" (states: ${EYE_STATES.join(", ")})`,
      );
    }
    eyes[sprite.name as EyeState] = decodePng(sprite.png, `eyes[${i}].png`, { max: { width, height } });
  }
  const missingEyes = EYE_STATES.filter((s) => !eyes[s]);
  if (missingEyes.length > 0) throw new LookError("eyes", `missing eye states ${missingEyes.join(", ")}`);

  const anchor = (name: string, p: { x: number; y: number } | undefined): Point => {
    const field = `anchors.${name}`;
    if (!p) throw new LookError(field, "is missing");
    if (!(p.x >= 0 && p.y >= 0 && p.x < width && p.y < height)) {
      throw new LookError(field, `(${p.x}, ${p.y}) is outside the ${width}x${height} canvas`);
    }
    return { x: p.x, y: p.y };
  };
  const anchors = {
    mouth: anchor("mouth", look.anchors?.mouth),
    eyes: anchor("eyes", look.anchors?.eyes),
    headPivot: anchor("head_pivot", look.anchors?.headPivot),
  };
  if (anchors.mouth.y <= anchors.eyes.y) throw new LookError("anchors.mouth", "must be below anchors.eyes");
  return { width, height, background, body, head, mouths, eyes, anchors };
}

function decodePng(
  bytes: Uint8Array,
  field: string,
  size: { width?: number; height?: number; max?: { width: number; height: number } } = {},
): Image {
  if (bytes.length === 0) throw new LookError(field, "is missing");
  const defect = pngDefect(bytes);
  if (defect) throw new LookError(field, defect);
  const image = new Image();
  try {
    image.src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (err) {
    throw new LookError(field, `does not decode: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!(image.width > 0 && image.height > 0)) throw new LookError(field, "does not decode (corrupt PNG)");
  if (size.width !== undefined && (image.width !== size.width || image.height !== size.height)) {
    throw new LookError(
      field,
      `must be ${size.width}x${size.height} like the canvas (got ${image.width}x${image.height})`,
    );
  }
  if (size.max && (image.width > size.max.width || image.height > size.max.height)) {
    throw new LookError(field, `is larger than the canvas (${image.width}x${image.height})`);
  }
  return image;
}

function isOpaque(image: Image): boolean {
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(image, 0, 0);
  const data = ctx.getImageData(0, 0, image.width, image.height).data;
  for (let i = 3; i < data.length; i += 4) if ((data[i] as number) < 255) return false;
  return true;
}
