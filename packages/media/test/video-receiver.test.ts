import { writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packetizeH264 } from "../src/rtp/h264.js";
import type { RtpPacket } from "../src/rtp/rtp-packet.js";
import { SequenceGaps } from "../src/rtp/rtp-packet.js";
import { VideoReceiver } from "../src/webrtc/video-receiver.js";
import { encodedFrames } from "./encoded-frames.js";
import { decodeWithFfmpeg } from "./ffmpeg-decode.js";

const dir = await mkdtemp(join(tmpdir(), "media-receiver-"));

describe("SequenceGaps", () => {
  it("counts what is missing before each packet, across the 16-bit wrap", () => {
    const gaps = new SequenceGaps();
    expect([65_533, 65_534, 1, 2, 5].map((n) => gaps.next(n))).toEqual([0, 0, 2, 0, 2]);
  });
});

describe("VideoReceiver", () => {
  it("after a lost packet delivers nothing until a keyframe, asks for one, and what it delivers decodes", async () => {
    // H264 at 25 fps, keyframes at 0 and 30: the second is a fresh encoder's first frame, as a PLI
    // brings (made apart, so that no handover under load can take frames out of the sequence).
    const before = await encodedFrames("H264", 30);
    const after = await encodedFrames("H264", 10);
    const frames = [...before, ...after.map((f) => ({ ...f, index: f.index + 30 }))];
    expect(frames.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 30]);
    let now = 0;
    const asked: number[] = [];
    const receiver = new VideoReceiver(
      () => "H264",
      () => {
        asked.push(now);
        return true;
      },
      () => now,
    );
    let sequenceNumber = 100;
    const delivered: number[] = [];
    const data: Uint8Array[] = [];
    let lost = 0;
    let skipped = 0;
    for (const frame of frames) {
      now = frame.index * 40;
      const payloads = packetizeH264(frame.data, 1160);
      payloads.forEach((payload, i) => {
        const packet: RtpPacket = {
          payloadType: 102,
          sequenceNumber: sequenceNumber++ & 0xffff,
          timestamp: frame.index * 3600,
          ssrc: 1,
          marker: i === payloads.length - 1,
          payload,
        };
        // Frame 10 never arrives.
        if (frame.index === 10) return;
        const got = receiver.push(packet);
        lost += got.lost;
        if (got.skipped) skipped++;
        if (got.frame) {
          delivered.push(frame.index);
          data.push(got.frame.data);
        }
      });
    }
    expect(lost).toBe(packetizeH264(frames[10]?.data ?? new Uint8Array(), 1160).length);
    // 0-9, then nothing until the keyframe at 30.
    expect(delivered).toEqual([...Array(10).keys(), ...Array.from({ length: 10 }, (_, i) => 30 + i)]);
    expect(skipped).toBe(19); // 11-29
    // Asked when the loss showed (frame 11's packet, 440 ms), again 500 ms later while none came; the
    // keyframe at 30 (1,200 ms) ended it.
    expect(asked).toEqual([440, 960]);
    const file = join(dir, "after-loss.h264");
    writeFileSync(file, Buffer.concat(data));
    expect(decodeWithFfmpeg(file).videoFrames).toBe(20);
  });
});
