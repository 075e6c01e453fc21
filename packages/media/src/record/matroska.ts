import { itemAt } from "../checked.js";

/**
 * A small Matroska (.mkv / .webm) writer: an unknown-size segment, one video and one audio track, and
 * clusters of SimpleBlocks written in time order (each cluster with its size, so every player reads it).
 */

type Element = [id: number, body: Buffer];

function idBytes(id: number): Buffer {
  const bytes: number[] = [];
  for (let v = id; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from(bytes);
}

function sizeBytes(n: number): Buffer {
  for (let len = 1; len <= 8; len++) {
    if (n < 2 ** (7 * len) - 1) {
      const out = Buffer.alloc(len);
      let v = n;
      for (let i = len - 1; i >= 0; i--) {
        out[i] = v % 256;
        v = Math.floor(v / 256);
      }
      out.writeUInt8(out.readUInt8(0) | (1 << (8 - len)), 0);
      return out;
    }
  }
  throw new Error("element too large");
}

const element = (id: number, body: Buffer): Buffer =>
  Buffer.concat([idBytes(id), sizeBytes(body.length), body]);
const master = (id: number, children: Buffer[]): Buffer => element(id, Buffer.concat(children));

function uint(id: number, value: number): Buffer {
  const bytes: number[] = [];
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return element(id, Buffer.from(bytes.length > 0 ? bytes : [0]));
}

function float(id: number, value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(value);
  return element(id, b);
}

const str = (id: number, value: string): Buffer => element(id, Buffer.from(value, "utf8"));

export interface MatroskaTracks {
  video?: { codecId: "V_MPEG4/ISO/AVC" | "V_VP8"; width: number; height: number; codecPrivate?: Buffer };
  audio?: { codecId: "A_OPUS"; sampleRate: number; channels: number; codecPrivate: Buffer };
}

export const VIDEO_TRACK = 1;
export const AUDIO_TRACK = 2;

/** The file's start: EBML header, segment (size unknown), info and tracks. */
export function matroskaHeader(tracks: MatroskaTracks, docType: "matroska" | "webm"): Buffer {
  const ebml = master(0x1a45dfa3, [
    uint(0x4286, 1),
    uint(0x42f7, 1),
    uint(0x42f2, 4),
    uint(0x42f3, 8),
    str(0x4282, docType),
    uint(0x4287, 4),
    uint(0x4285, 2),
  ]);
  const segmentStart = Buffer.concat([
    idBytes(0x18538067),
    Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
  ]);
  const info = master(0x1549a966, [
    uint(0x2ad7b1, 1_000_000),
    str(0x4d80, "avatar media"),
    str(0x5741, "avatar media"),
  ]);
  const entries: Buffer[] = [];
  if (tracks.video) {
    const v = tracks.video;
    entries.push(
      master(0xae, [
        uint(0xd7, VIDEO_TRACK),
        uint(0x73c5, VIDEO_TRACK),
        uint(0x83, 1),
        str(0x86, v.codecId),
        ...(v.codecPrivate ? [element(0x63a2, v.codecPrivate)] : []),
        master(0xe0, [uint(0xb0, v.width), uint(0xba, v.height)]),
      ]),
    );
  }
  if (tracks.audio) {
    const a = tracks.audio;
    entries.push(
      master(0xae, [
        uint(0xd7, AUDIO_TRACK),
        uint(0x73c5, AUDIO_TRACK),
        uint(0x83, 2),
        str(0x86, a.codecId),
        element(0x63a2, a.codecPrivate),
        master(0xe1, [float(0xb5, a.sampleRate), uint(0x9f, a.channels)]),
      ]),
    );
  }
  return Buffer.concat([ebml, segmentStart, info, master(0x1654ae6b, entries)]);
}

export interface Block {
  track: number;
  timeMs: number;
  keyframe: boolean;
  data: Uint8Array;
}

/** One cluster of blocks (in time order, spanning less than 32 s). */
export function matroskaCluster(blocks: readonly Block[]): Buffer {
  const clusterTime = blocks[0]?.timeMs ?? 0;
  const children: Buffer[] = [uint(0xe7, clusterTime)];
  for (const block of blocks) {
    const head = Buffer.alloc(4);
    head[0] = 0x80 | block.track;
    head.writeInt16BE(block.timeMs - clusterTime, 1);
    head[3] = block.keyframe ? 0x80 : 0;
    children.push(element(0xa3, Buffer.concat([head, block.data])));
  }
  return master(0x1f43b675, children);
}

/** Opus's codec private data: the OpusHead of RFC 7845. */
export function opusHead(channels: number, sampleRate: number): Buffer {
  const head = Buffer.alloc(19);
  head.write("OpusHead", 0, "latin1");
  head[8] = 1;
  head[9] = channels;
  head.writeUInt16LE(312, 10);
  head.writeUInt32LE(sampleRate, 12);
  return head;
}

/** An AVCDecoderConfigurationRecord from one SPS and one PPS (ISO 14496-15). */
export function avcDecoderConfig(sps: Uint8Array, pps: Uint8Array): Buffer {
  return Buffer.concat([
    Buffer.from([1, itemAt(sps, 1), itemAt(sps, 2), itemAt(sps, 3), 0xff, 0xe1]),
    Buffer.from([sps.length >> 8, sps.length & 0xff]),
    sps,
    Buffer.from([1, pps.length >> 8, pps.length & 0xff]),
    pps,
  ]);
}

export type { Element };
