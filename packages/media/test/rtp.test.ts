import { describe, expect, it } from "vitest";
import { itemAt } from "../src/checked.js";
import { H264Depacketizer, isH264Keyframe, joinAnnexB, packetizeH264, splitAnnexB } from "../src/rtp/h264.js";
import { buildPli, buildSenderReport, parseRtcp } from "../src/rtp/rtcp.js";
import { isRtcp, parseRtpPacket, writeRtpPacket } from "../src/rtp/rtp-packet.js";
import { isVp8Keyframe, packetizeVp8, Vp8Depacketizer, vp8KeyframeSize } from "../src/rtp/vp8.js";

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251 || 1);

describe("H264 over RTP", () => {
  it("splits an access unit into single NALs and FU-A fragments and puts it back together", () => {
    const sps = Uint8Array.of(0x67, 0x42, 0xc0, 0x1f, 9);
    const pps = Uint8Array.of(0x68, 0xce, 0x3c, 0x80);
    const idr = Uint8Array.from([0x65, ...bytes(5000, 3)]);
    const au = joinAnnexB([sps, pps, idr]);
    const payloads = packetizeH264(au, 1200);
    expect(payloads.length).toBe(2 + Math.ceil((idr.length - 1) / 1198));
    expect(payloads.every((p) => p.length <= 1200)).toBe(true);
    const depacketizer = new H264Depacketizer();
    let out: Uint8Array | undefined;
    payloads.forEach((p, i) => {
      out = depacketizer.push(p, i === payloads.length - 1) ?? out;
    });
    expect(out && Buffer.from(out).equals(Buffer.from(au))).toBe(true);
    expect(isH264Keyframe(au)).toBe(true);
    expect(splitAnnexB(au).map((u) => u.length)).toEqual([sps.length, pps.length, idr.length]);
  });

  it("drops a NAL whose fragments lost their start after a reset", () => {
    const au = joinAnnexB([Uint8Array.from([0x41, ...bytes(3000, 1)])]);
    const payloads = packetizeH264(au, 1000);
    const depacketizer = new H264Depacketizer();
    depacketizer.push(itemAt(payloads, 0), false);
    depacketizer.reset();
    expect(depacketizer.push(itemAt(payloads, payloads.length - 1), true)).toBeUndefined();
  });
});

describe("VP8 over RTP", () => {
  it("round-trips a frame through the payload descriptor", () => {
    const frame = Uint8Array.from([
      0x10,
      0x02,
      0x00,
      0x9d,
      0x01,
      0x2a,
      0x80,
      0x02,
      0x68,
      0x01,
      ...bytes(4000, 7),
    ]);
    const payloads = packetizeVp8(frame, 1234, 1200);
    expect(payloads.length).toBe(Math.ceil(frame.length / 1196));
    const depacketizer = new Vp8Depacketizer();
    let out: Uint8Array | undefined;
    payloads.forEach((p, i) => {
      out = depacketizer.push(p, i === payloads.length - 1) ?? out;
    });
    expect(out && Buffer.from(out).equals(Buffer.from(frame))).toBe(true);
    expect(isVp8Keyframe(frame)).toBe(true);
    expect(vp8KeyframeSize(frame)).toEqual({ width: 640, height: 360 });
  });
});

describe("RTP and RTCP", () => {
  it("writes and parses an RTP header", () => {
    const packet = writeRtpPacket(
      { payloadType: 102, sequenceNumber: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, marker: true },
      Uint8Array.of(1, 2, 3),
    );
    expect(isRtcp(packet)).toBe(false);
    expect(parseRtpPacket(packet)).toMatchObject({
      payloadType: 102,
      sequenceNumber: 65535,
      timestamp: 0xfffffff0,
      ssrc: 0xdeadbeef,
      marker: true,
    });
    expect(parseRtpPacket(Uint8Array.of(1, 2, 3))).toBeUndefined();
  });

  it("answers undefined for malformed packets instead of reading past their end", () => {
    const header = (first: number) => Uint8Array.of(first, 96, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3);
    // Version 1; padding longer than the packet; a header extension cut short; CSRCs that are not there.
    expect(parseRtpPacket(header(0x40))).toBeUndefined();
    expect(parseRtpPacket(Uint8Array.of(...header(0xa0), 1, 2, 200))).toBeUndefined();
    expect(parseRtpPacket(Uint8Array.of(...header(0x90), 0xbe))).toBeUndefined();
    expect(parseRtpPacket(header(0x8f))).toBeUndefined();
    expect(parseRtpPacket(Uint8Array.of(...header(0xa0), 7, 8, 1))?.payload).toEqual(Uint8Array.of(7, 8));
    // A truncated STAP-A and VP8 descriptor are dropped, not thrown on.
    expect(new H264Depacketizer().push(Uint8Array.of(24, 0), true)).toBeUndefined();
    expect(new Vp8Depacketizer().push(Uint8Array.of(), true)).toBeUndefined();
    expect(() => itemAt(Uint8Array.of(1), 1)).toThrow(RangeError);
  });

  it("builds sender reports and reads them back with keyframe requests from a compound packet", () => {
    const ntpMs = 1_700_000_000_123.5;
    const sr = buildSenderReport({ ssrc: 7, ntpMs, rtpTimestamp: 123_456, packets: 10, octets: 1000 });
    const compound = Buffer.concat([sr, buildPli(1, 7)]);
    expect(isRtcp(compound)).toBe(true);
    const items = parseRtcp(compound);
    expect(items[0]).toMatchObject({ type: "sender-report", ssrc: 7, rtpTimestamp: 123_456, packets: 10 });
    expect(Math.abs((items[0] as { ntpMs: number }).ntpMs - ntpMs)).toBeLessThan(0.01);
    expect(items[1]).toEqual({ type: "keyframe-request", kind: "pli", mediaSsrc: 7 });
    expect(parseRtcp(Uint8Array.of(0x80, 200, 0, 99))).toEqual([]);
  });
});
