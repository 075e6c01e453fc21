/**
 * Pixels in I420 (BT.601, limited range: what browsers assume for untagged H264/VP8): conversion from
 * RGBA once per rasterized look, then sprites that composite cheaply every frame. A sprite keeps, per
 * row, spans of fully opaque pixels (copied with one `set`) and spans of partly transparent ones
 * (blended pixel by pixel); fully transparent pixels cost nothing.
 */

/** An I420 image with even width and height: Y, then U and V at half width and height. */
export interface PlanarImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** An I420 image with alpha, even width and height. */
export interface Sprite {
  width: number;
  height: number;
  y: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
  /** Per luma pixel alpha 0..256 (256 = opaque), only read inside blend spans. */
  alphaY: Uint16Array;
  alphaC: Uint16Array;
  /** Per row: [start, end) pairs, opaque spans first then blend spans; see spansOf. */
  spansY: RowSpans;
  spansC: RowSpans;
  /** Bytes held, for the cache's accounting. */
  bytes: number;
}

interface RowSpans {
  /** rowStart[r]..rowStart[r+1] indexes `spans` (pairs); `opaqueCount[r]` pairs are opaque, the rest blend. */
  rowStart: Int32Array;
  opaqueCount: Int32Array;
  spans: Int32Array;
}

const clamp8 = (v: number) => Math.min(255, Math.max(0, v));
const lumaOf = (r: number, g: number, b: number) => clamp8(16 + ((66 * r + 129 * g + 25 * b + 128) >> 8));
const cbOf = (r: number, g: number, b: number) => clamp8(128 + ((-38 * r - 74 * g + 112 * b + 128) >> 8));
const crOf = (r: number, g: number, b: number) => clamp8(128 + ((112 * r - 94 * g - 18 * b + 128) >> 8));

/** An opaque RGBA image (even size) as I420; chroma is the mean of each 2x2 block. */
export function rgbaToI420(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): PlanarImage {
  const cw = width >> 1;
  const ch = height >> 1;
  const data = new Uint8Array(width * height + 2 * cw * ch);
  const uOff = width * height;
  const vOff = uOff + cw * ch;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      data[y * width + x] = lumaOf(rgba[p] as number, rgba[p + 1] as number, rgba[p + 2] as number);
    }
  }
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let k = 0; k < 4; k++) {
        const p = ((2 * cy + (k >> 1)) * width + 2 * cx + (k & 1)) * 4;
        r += rgba[p] as number;
        g += rgba[p + 1] as number;
        b += rgba[p + 2] as number;
      }
      data[uOff + cy * cw + cx] = cbOf(r >> 2, g >> 2, b >> 2);
      data[vOff + cy * cw + cx] = crOf(r >> 2, g >> 2, b >> 2);
    }
  }
  return { width, height, data };
}

/** I420 back to RGBA (for posters and screenshots). */
export function i420ToRgba(image: PlanarImage): Uint8ClampedArray {
  const { width, height, data } = image;
  const cw = width >> 1;
  const uOff = width * height;
  const vOff = uOff + cw * (height >> 1);
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const c = (y >> 1) * cw + (x >> 1);
      const yy = 1.164 * ((data[y * width + x] as number) - 16);
      const u = (data[uOff + c] as number) - 128;
      const v = (data[vOff + c] as number) - 128;
      const p = (y * width + x) * 4;
      out[p] = yy + 1.596 * v;
      out[p + 1] = yy - 0.392 * u - 0.813 * v;
      out[p + 2] = yy + 2.017 * u;
      out[p + 3] = 255;
    }
  }
  return out;
}

/** An RGBA image with alpha (even size, not premultiplied) as a sprite. */
export function rgbaToSprite(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Sprite {
  const cw = width >> 1;
  const ch = height >> 1;
  const y = new Uint8Array(width * height);
  const alphaY = new Uint16Array(width * height);
  const u = new Uint8Array(cw * ch);
  const v = new Uint8Array(cw * ch);
  const alphaC = new Uint16Array(cw * ch);
  for (let i = 0; i < width * height; i++) {
    const p = i * 4;
    y[i] = lumaOf(rgba[p] as number, rgba[p + 1] as number, rgba[p + 2] as number);
    const a = rgba[p + 3] as number;
    alphaY[i] = a + (a >> 7);
  }
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      // Alpha-weighted colour of the 2x2 block: transparent pixels' colours must not bleed in.
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let k = 0; k < 4; k++) {
        const p = ((2 * cy + (k >> 1)) * width + 2 * cx + (k & 1)) * 4;
        const w = rgba[p + 3] as number;
        r += (rgba[p] as number) * w;
        g += (rgba[p + 1] as number) * w;
        b += (rgba[p + 2] as number) * w;
        a += w;
      }
      const i = cy * cw + cx;
      if (a > 0) {
        u[i] = cbOf(r / a, g / a, b / a);
        v[i] = crOf(r / a, g / a, b / a);
      }
      const mean = Math.round(a / 4);
      alphaC[i] = mean + (mean >> 7);
    }
  }
  const spansY = spansOf(alphaY, width, height);
  const spansC = spansOf(alphaC, cw, ch);
  const bytes =
    y.length +
    u.length +
    v.length +
    2 * (alphaY.length + alphaC.length) +
    4 * (spansY.spans.length + spansC.spans.length);
  return { width, height, y, u, v, alphaY, alphaC, spansY, spansC, bytes };
}

function spansOf(alpha: Uint16Array, width: number, height: number): RowSpans {
  const rowStart = new Int32Array(height + 1);
  const opaqueCount = new Int32Array(height);
  const spans: number[] = [];
  for (let r = 0; r < height; r++) {
    rowStart[r] = spans.length >> 1;
    const opaque: number[] = [];
    const blend: number[] = [];
    let x = 0;
    while (x < width) {
      const a = alpha[r * width + x] as number;
      if (a === 0) {
        x++;
        continue;
      }
      const full = a === 256;
      const start = x;
      while (x < width) {
        const b = alpha[r * width + x] as number;
        if (b === 0 || (b === 256) !== full) break;
        x++;
      }
      (full ? opaque : blend).push(start, x);
    }
    opaqueCount[r] = opaque.length >> 1;
    spans.push(...opaque, ...blend);
  }
  rowStart[height] = spans.length >> 1;
  return { rowStart, opaqueCount, spans: Int32Array.from(spans) };
}

/**
 * Composites the sprite onto the frame with its top left at (x, y), clipped. At odd coordinates the chroma
 * lands half a chroma pixel off, which no one sees, and motion keeps one-pixel steps.
 */
export function blitSprite(frame: PlanarImage, sprite: Sprite, x: number, y: number): void {
  const left = x;
  const top = y;
  const { width, height, data } = frame;
  const cw = width >> 1;
  const ch = height >> 1;
  blitPlane(data, 0, width, height, sprite.y, sprite.alphaY, sprite.spansY, sprite.width, left, top);
  const uOff = width * height;
  const vOff = uOff + cw * ch;
  const scw = sprite.width >> 1;
  blitPlane(data, uOff, cw, ch, sprite.u, sprite.alphaC, sprite.spansC, scw, left >> 1, top >> 1);
  blitPlane(data, vOff, cw, ch, sprite.v, sprite.alphaC, sprite.spansC, scw, left >> 1, top >> 1);
}

function blitPlane(
  dst: Uint8Array,
  offset: number,
  dstW: number,
  dstH: number,
  src: Uint8Array,
  alpha: Uint16Array,
  spans: RowSpans,
  srcW: number,
  left: number,
  top: number,
): void {
  const rows = spans.rowStart.length - 1;
  const r0 = Math.max(0, -top);
  const r1 = Math.min(rows, dstH - top);
  const list = spans.spans;
  for (let r = r0; r < r1; r++) {
    const dstRow = offset + (top + r) * dstW + left;
    const srcRow = r * srcW;
    const first = spans.rowStart[r] as number;
    const last = spans.rowStart[r + 1] as number;
    const opaqueEnd = first + (spans.opaqueCount[r] as number);
    for (let s = first; s < last; s++) {
      let a = list[2 * s] as number;
      let b = list[2 * s + 1] as number;
      if (a + left < 0) a = -left;
      if (b + left > dstW) b = dstW - left;
      if (a >= b) continue;
      if (s < opaqueEnd) {
        dst.set(src.subarray(srcRow + a, srcRow + b), dstRow + a);
      } else {
        for (let i = a; i < b; i++) {
          const k = alpha[srcRow + i] as number;
          const d = dst[dstRow + i] as number;
          dst[dstRow + i] = d + ((((src[srcRow + i] as number) - d) * k) >> 8);
        }
      }
    }
  }
}
