import { crc32, deflateSync } from "node:zlib";
import type { Canvas } from "@napi-rs/canvas";

/**
 * A PNG encoder for generated looks: RGBA, each row with the Sub filter, deflate level 3. Skia's own
 * encoder compresses smooth gradients ten times slower for files barely smaller.
 */
export function encodePng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Buffer {
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (stride + 1);
    raw[row] = 1; // Sub: each byte minus the same channel of the pixel to its left.
    const src = y * stride;
    for (let i = 0; i < stride; i++) {
      raw[row + 1 + i] = ((rgba[src + i] as number) - (i >= 4 ? (rgba[src + i - 4] as number) : 0)) & 255;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(raw, { level: 3 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export function canvasToPng(canvas: Canvas): Buffer {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  return encodePng(data, canvas.width, canvas.height);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
