/**
 * The RTCP we speak (RFC 3550, RFC 4585, RFC 5104): sender reports we send so receivers can line audio up
 * with video, and the keyframe requests (PLI, FIR) and reports we read from them.
 */

/** Seconds between the NTP epoch (1900) and the Unix epoch (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800;

export type RtcpItem =
  | {
      type: "sender-report";
      ssrc: number;
      ntpMs: number;
      rtpTimestamp: number;
      packets: number;
      octets: number;
    }
  | { type: "receiver-report"; ssrc: number }
  | { type: "keyframe-request"; kind: "pli" | "fir"; mediaSsrc: number }
  | { type: "nack"; mediaSsrc: number }
  | { type: "other"; packetType: number };

/** An SR with no report blocks: at wall time `ntpMs` (Unix ms) the stream's RTP clock reads `rtpTimestamp`. */
export function buildSenderReport(fields: {
  ssrc: number;
  ntpMs: number;
  rtpTimestamp: number;
  packets: number;
  octets: number;
}): Buffer {
  const out = Buffer.alloc(28);
  out[0] = 0x80;
  out[1] = 200;
  out.writeUInt16BE(6, 2);
  out.writeUInt32BE(fields.ssrc >>> 0, 4);
  const seconds = fields.ntpMs / 1000 + NTP_UNIX_OFFSET_S;
  const whole = Math.floor(seconds);
  out.writeUInt32BE(whole >>> 0, 8);
  out.writeUInt32BE(Math.floor((seconds - whole) * 0x1_0000_0000) >>> 0, 12);
  out.writeUInt32BE(fields.rtpTimestamp >>> 0, 16);
  out.writeUInt32BE(fields.packets >>> 0, 20);
  out.writeUInt32BE(fields.octets >>> 0, 24);
  return out;
}

/** A picture loss indication (RFC 4585 6.3.1): "send me a keyframe". */
export function buildPli(senderSsrc: number, mediaSsrc: number): Buffer {
  const out = Buffer.alloc(12);
  out[0] = 0x81;
  out[1] = 206;
  out.writeUInt16BE(2, 2);
  out.writeUInt32BE(senderSsrc >>> 0, 4);
  out.writeUInt32BE(mediaSsrc >>> 0, 8);
  return out;
}

/** A receiver report about one source (counts left zero: it says "still here", as receivers do every second). */
export function buildReceiverReport(senderSsrc: number, mediaSsrc: number): Buffer {
  const out = Buffer.alloc(32);
  out[0] = 0x81;
  out[1] = 201;
  out.writeUInt16BE(7, 2);
  out.writeUInt32BE(senderSsrc >>> 0, 4);
  out.writeUInt32BE(mediaSsrc >>> 0, 8);
  return out;
}

/** Every packet of a compound RTCP datagram; malformed tails are ignored. */
export function parseRtcp(data: Uint8Array): RtcpItem[] {
  const items: RtcpItem[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  while (offset + 4 <= data.length) {
    const first = view.getUint8(offset);
    const packetType = view.getUint8(offset + 1);
    const length = (view.getUint16(offset + 2) + 1) * 4;
    if ((first & 0xc0) !== 0x80 || offset + length > data.length) break;
    const fmt = first & 0x1f;
    const at = (k: number) => view.getUint32(offset + k);
    if (packetType === 200 && length >= 28) {
      const seconds = at(8) - NTP_UNIX_OFFSET_S + at(12) / 0x1_0000_0000;
      items.push({
        type: "sender-report",
        ssrc: at(4),
        ntpMs: seconds * 1000,
        rtpTimestamp: at(16),
        packets: at(20),
        octets: at(24),
      });
    } else if (packetType === 201 && length >= 8) {
      items.push({ type: "receiver-report", ssrc: at(4) });
    } else if (packetType === 206 && fmt === 1 && length >= 12) {
      items.push({ type: "keyframe-request", kind: "pli", mediaSsrc: at(8) });
    } else if (packetType === 206 && fmt === 4 && length >= 20) {
      items.push({ type: "keyframe-request", kind: "fir", mediaSsrc: at(12) });
    } else if (packetType === 205 && fmt === 1 && length >= 12) {
      items.push({ type: "nack", mediaSsrc: at(8) });
    } else {
      items.push({ type: "other", packetType });
    }
    offset += length;
  }
  return items;
}
