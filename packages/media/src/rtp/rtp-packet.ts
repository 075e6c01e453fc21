/** RTP packets (RFC 3550): the fixed 12-byte header we write, and the parse a receiver needs. */

export const RTP_HEADER_BYTES = 12;

export interface RtpHeaderFields {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
}

/** One RTP packet: header (no CSRC, no extension) then payload. */
export function writeRtpPacket(header: RtpHeaderFields, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(RTP_HEADER_BYTES + payload.length);
  out[0] = 0x80;
  out[1] = (header.marker ? 0x80 : 0) | (header.payloadType & 0x7f);
  out.writeUInt16BE(header.sequenceNumber & 0xffff, 2);
  out.writeUInt32BE(header.timestamp >>> 0, 4);
  out.writeUInt32BE(header.ssrc >>> 0, 8);
  out.set(payload, RTP_HEADER_BYTES);
  return out;
}

export interface RtpPacket extends RtpHeaderFields {
  payload: Uint8Array;
}

/** RTCP shares the port (rtcp-mux): packet types 192-223 sit where RTP's marker+payload type would be. */
export function isRtcp(packet: Uint8Array): boolean {
  const pt = packet[1] ?? 0;
  return packet.length >= 4 && pt >= 192 && pt <= 223;
}

/** Parses an RTP packet (CSRCs, header extension and padding honoured); undefined when it is not one. */
export function parseRtpPacket(packet: Uint8Array): RtpPacket | undefined {
  if (packet.length < RTP_HEADER_BYTES || isRtcp(packet)) return undefined;
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  const first = view.getUint8(0);
  const second = view.getUint8(1);
  if ((first & 0xc0) !== 0x80) return undefined;
  let offset = RTP_HEADER_BYTES + 4 * (first & 0x0f);
  if (first & 0x10) {
    if (packet.length < offset + 4) return undefined;
    offset += 4 + 4 * view.getUint16(offset + 2);
  }
  let end = packet.length;
  if (first & 0x20) end -= view.getUint8(packet.length - 1);
  if (end < offset) return undefined;
  return {
    payloadType: second & 0x7f,
    marker: (second & 0x80) !== 0,
    sequenceNumber: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    payload: packet.subarray(offset, end),
  };
}

/** A random 32-bit value (SSRCs, initial timestamps and sequence numbers, RFC 3550 section 5.1). */
export const random32 = (): number => Math.floor(Math.random() * 0x1_0000_0000) >>> 0;

/** How many packets went missing before each one of a stream (16-bit sequence numbers, wrapping). */
export class SequenceGaps {
  private expected: number | undefined;

  /** The packets lost just before this one: 0 when it is the one expected, or the first. */
  next(sequenceNumber: number): number {
    const lost = this.expected === undefined ? 0 : (sequenceNumber - this.expected) & 0xffff;
    this.expected = (sequenceNumber + 1) & 0xffff;
    return lost;
  }
}
