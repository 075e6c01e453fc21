import { crc32, deflateSync, inflateSync } from "node:zlib";
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

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Why these bytes are not a whole, uncorrupted PNG (undefined when they are): every chunk's CRC, IHDR
 * first, IEND last, and image data that inflates to exactly the rows the header promises. Decoders
 * happily show half an image; a look must not.
 */
export function pngDefect(bytes: Uint8Array): string | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 8 || buf.readUInt32BE(0) !== 0x89504e47) return "is not a PNG image";
  let at = 8;
  let header: Buffer | undefined;
  const data: Buffer[] = [];
  let ended = false;
  while (at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    if (at + 12 + length > buf.length) return "is truncated";
    const type = buf.toString("latin1", at + 4, at + 8);
    if (crc32(buf.subarray(at + 4, at + 8 + length)) !== buf.readUInt32BE(at + 8 + length)) {
      return `is corrupt (bad checksum in its ${type} chunk)`;
    }
    const body = buf.subarray(at + 8, at + 8 + length);
    if (!header && type !== "IHDR") return "is corrupt (no IHDR first)";
    if (type === "IHDR") header = body;
    else if (type === "IDAT") data.push(body);
    else if (type === "IEND") {
      ended = true;
      break;
    }
    at += 12 + length;
  }
  if (!header || !ended) return "is truncated";
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const channels = CHANNELS[header[9] as number];
  if (channels === undefined) return "is corrupt (unknown colour type)";
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(data));
  } catch {
    return "is corrupt (its image data does not inflate)";
  }
  const rowBytes = Math.ceil((width * channels * (header[8] as number)) / 8);
  if (header[12] === 0 && raw.length !== height * (rowBytes + 1))
    return "is corrupt (image data of the wrong size)";
  return undefined;
}
