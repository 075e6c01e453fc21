import { itemAt } from "../checked.js";

/**
 * VP8 over RTP (RFC 7741): each packet starts with a payload descriptor; we send the short form with a
 * 15-bit picture id (browsers use it to detect lost frames). The receiver's depacketizer strips it.
 */

/** RTP payloads of one VP8 frame, in order; the last carries the marker bit. */
export function packetizeVp8(frame: Uint8Array, pictureId: number, maxPayload: number): Uint8Array[] {
  const descriptorBytes = 4;
  const chunk = maxPayload - descriptorBytes;
  const payloads: Uint8Array[] = [];
  for (let offset = 0; offset < frame.length || offset === 0; offset += chunk) {
    const part = frame.subarray(offset, offset + chunk);
    const out = new Uint8Array(descriptorBytes + part.length);
    out[0] = 0x80 | (offset === 0 ? 0x10 : 0); // X=1, S=1 on the first packet, partition 0
    out[1] = 0x80; // I: picture id present
    out[2] = 0x80 | ((pictureId >> 8) & 0x7f); // M=1: 15-bit picture id
    out[3] = pictureId & 0xff;
    out.set(part, descriptorBytes);
    payloads.push(out);
    if (frame.length === 0) break;
  }
  return payloads;
}

/** The payload descriptor's length (RFC 7741 section 4.2); undefined when the payload is too short. */
function descriptorLength(payload: Uint8Array): number | undefined {
  let n = 1;
  const first = payload[0];
  if (first === undefined) return undefined;
  if (first & 0x80) {
    const ext = payload[1];
    if (ext === undefined) return undefined;
    n = 2;
    if (ext & 0x80) n += (payload[n] ?? 0) & 0x80 ? 2 : 1; // picture id, 7 or 15 bits
    if (ext & 0x40) n += 1; // TL0PICIDX
    if (ext & 0x30) n += 1; // TID / KEYIDX
  }
  return n <= payload.length ? n : undefined;
}

/** Reassembles VP8 frames from RTP payloads; a frame is complete at the marker bit. */
export class Vp8Depacketizer {
  private parts: Uint8Array[] = [];
  private started = false;

  push(payload: Uint8Array, marker: boolean): Uint8Array | undefined {
    const n = descriptorLength(payload);
    if (n !== undefined) {
      const descriptor = itemAt(payload, 0);
      const startOfFrame = (descriptor & 0x10) !== 0 && (descriptor & 0x07) === 0;
      if (startOfFrame) {
        this.parts = [];
        this.started = true;
      }
      if (this.started) this.parts.push(payload.subarray(n));
    }
    if (!marker) return undefined;
    const frame = this.started && this.parts.length > 0 ? Buffer.concat(this.parts) : undefined;
    this.reset();
    return frame;
  }

  reset(): void {
    this.parts = [];
    this.started = false;
  }
}

/** A VP8 keyframe has the inverse key-frame bit clear in the first byte of its frame tag (RFC 6386). */
export const isVp8Keyframe = (frame: Uint8Array): boolean =>
  frame.length > 0 && (itemAt(frame, 0) & 0x01) === 0;

/** Width and height from a VP8 keyframe header, or undefined for an interframe. */
export function vp8KeyframeSize(frame: Uint8Array): { width: number; height: number } | undefined {
  if (!isVp8Keyframe(frame) || frame.length < 10) return undefined;
  if (frame[3] !== 0x9d || frame[4] !== 0x01 || frame[5] !== 0x2a) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  return { width: view.getUint16(6, true) & 0x3fff, height: view.getUint16(8, true) & 0x3fff };
}
