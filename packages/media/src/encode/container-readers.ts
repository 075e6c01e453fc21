/**
 * Incremental readers of the two containers ffmpeg writes to our pipe: FLV (H264) and IVF (VP8). Both
 * frame every packet with its size and timestamp, so each encoded frame is known complete the moment
 * its last byte arrives (a raw Annex B stream would only end at the next frame's start).
 */

import { itemAt } from "../checked.js";
import { joinAnnexB } from "../rtp/h264.js";

export interface ContainerFrame {
  /** The frame's position in the encoder's input, counted from 0. */
  count: number;
  data: Uint8Array;
  keyframe: boolean;
}

/** Bytes arrive in arbitrary chunks; `take` hands out exact lengths once they are all there. */
class ByteQueue {
  private chunks: Buffer[] = [];
  private length = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  get available(): number {
    return this.length;
  }

  peek(n: number): Buffer | undefined {
    if (this.length < n) return undefined;
    if (itemAt(this.chunks, 0).length < n) this.chunks = [Buffer.concat(this.chunks)];
    return itemAt(this.chunks, 0).subarray(0, n);
  }

  take(n: number): Buffer | undefined {
    const out = this.peek(n);
    if (!out) return undefined;
    const head = itemAt(this.chunks, 0);
    if (head.length === n) this.chunks.shift();
    else this.chunks[0] = head.subarray(n);
    this.length -= n;
    return out;
  }
}

/** FLV with H264 (ffmpeg's flv muxer): SPS/PPS arrive once in the sequence header, then AVCC frames. */
export class FlvH264Reader {
  private readonly bytes = new ByteQueue();
  private headerDone = false;
  private parameterSets: Uint8Array[] = [];

  constructor(private readonly frameMs: number) {}

  push(chunk: Buffer): ContainerFrame[] {
    this.bytes.push(chunk);
    const frames: ContainerFrame[] = [];
    if (!this.headerDone) {
      const header = this.bytes.peek(9);
      if (!header) return frames;
      if (header.toString("latin1", 0, 3) !== "FLV") throw new Error("encoder output is not FLV");
      if (!this.bytes.take(header.readUInt32BE(5) + 4)) return frames;
      this.headerDone = true;
    }
    for (;;) {
      const tagHeader = this.bytes.peek(11);
      if (!tagHeader) break;
      const size = tagHeader.readUIntBE(1, 3);
      const tag = this.bytes.take(11 + size + 4);
      if (!tag) break;
      if (tagHeader[0] !== 9) continue; // script data (metadata), not video
      const timestamp = tag.readUIntBE(4, 3) | (tag.readUInt8(7) << 24);
      const frame = this.videoTag(tag.subarray(11, 11 + size), timestamp);
      if (frame) frames.push(frame);
    }
    return frames;
  }

  private videoTag(body: Buffer, timestampMs: number): ContainerFrame | undefined {
    if (body.length < 5 || (body.readUInt8(0) & 0x0f) !== 7) return undefined;
    const keyframe = body.readUInt8(0) >> 4 === 1;
    if (body[1] === 0) {
      this.parameterSets = parseAvcDecoderConfig(body.subarray(5));
      return undefined;
    }
    if (body[1] !== 1) return undefined;
    const units: Uint8Array[] = keyframe ? [...this.parameterSets] : [];
    let offset = 5;
    while (offset + 4 <= body.length) {
      const n = body.readUInt32BE(offset);
      units.push(body.subarray(offset + 4, offset + 4 + n));
      offset += 4 + n;
    }
    return { count: Math.round(timestampMs / this.frameMs), data: joinAnnexB(units), keyframe };
  }
}

/** SPS and PPS from an AVCDecoderConfigurationRecord (ISO 14496-15). */
function parseAvcDecoderConfig(record: Buffer): Uint8Array[] {
  const units: Uint8Array[] = [];
  let offset = 5;
  const spsCount = (record[offset++] ?? 0) & 0x1f;
  for (let i = 0; i < spsCount && offset + 2 <= record.length; i++) {
    const n = record.readUInt16BE(offset);
    units.push(record.subarray(offset + 2, offset + 2 + n));
    offset += 2 + n;
  }
  const ppsCount = record[offset++] ?? 0;
  for (let i = 0; i < ppsCount && offset + 2 <= record.length; i++) {
    const n = record.readUInt16BE(offset);
    units.push(record.subarray(offset + 2, offset + 2 + n));
    offset += 2 + n;
  }
  return units;
}

/** IVF (VP8): a 32-byte file header, then each frame's 12-byte header (size, pts in frames). */
export class IvfReader {
  private readonly bytes = new ByteQueue();
  private headerDone = false;

  push(chunk: Buffer): ContainerFrame[] {
    this.bytes.push(chunk);
    const frames: ContainerFrame[] = [];
    if (!this.headerDone) {
      const header = this.bytes.peek(32);
      if (!header) return frames;
      if (header.toString("latin1", 0, 4) !== "DKIF") throw new Error("encoder output is not IVF");
      this.bytes.take(header.readUInt16LE(6));
      this.headerDone = true;
    }
    for (;;) {
      const frameHeader = this.bytes.peek(12);
      if (!frameHeader) break;
      const size = frameHeader.readUInt32LE(0);
      const pts = Number(frameHeader.readBigUInt64LE(4));
      const frame = this.bytes.take(12 + size);
      if (!frame) break;
      const data = frame.subarray(12);
      frames.push({ count: pts, data, keyframe: data.length > 0 && (data.readUInt8(0) & 1) === 0 });
    }
    return frames;
  }
}
