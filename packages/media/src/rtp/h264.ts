import { itemAt } from "../checked.js";

/**
 * H264 over RTP (RFC 6184, packetization-mode 1): NAL units from an Annex B access unit go out as single
 * NAL unit packets or FU-A fragments; the receiver's depacketizer puts them back into Annex B.
 */

export const NAL_IDR = 5;
export const NAL_SPS = 7;
export const NAL_PPS = 8;
const NAL_STAP_A = 24;
const NAL_FU_A = 28;
const START_CODE = Uint8Array.of(0, 0, 0, 1);

/** The NAL units of an Annex B byte stream (3- or 4-byte start codes), without their start codes. */
export function splitAnnexB(data: Uint8Array): Uint8Array[] {
  const units: Uint8Array[] = [];
  let start = -1;
  let i = 0;
  while (i + 2 < data.length) {
    if (data[i] === 0 && data[i + 1] === 0 && data[i + 2] === 1) {
      if (start >= 0) units.push(trimTrailingZeros(data.subarray(start, i)));
      i += 3;
      start = i;
    } else {
      i++;
    }
  }
  if (start >= 0 && start < data.length) units.push(data.subarray(start));
  return units.filter((u) => u.length > 0);
}

function trimTrailingZeros(unit: Uint8Array): Uint8Array {
  let end = unit.length;
  while (end > 0 && unit[end - 1] === 0) end--;
  return unit.subarray(0, end);
}

export const nalType = (unit: Uint8Array): number => (unit[0] ?? 0) & 0x1f;

/** Annex B bytes of these NAL units (4-byte start codes). */
export function joinAnnexB(units: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(units.reduce((n, u) => n + 4 + u.length, 0));
  let offset = 0;
  for (const unit of units) {
    out.set(START_CODE, offset);
    out.set(unit, offset + 4);
    offset += 4 + unit.length;
  }
  return out;
}

/** RTP payloads of one access unit, in order; the last carries the marker bit. */
export function packetizeH264(accessUnit: Uint8Array, maxPayload: number): Uint8Array[] {
  const payloads: Uint8Array[] = [];
  for (const unit of splitAnnexB(accessUnit)) {
    if (unit.length <= maxPayload) {
      payloads.push(unit);
      continue;
    }
    const header = itemAt(unit, 0);
    const indicator = (header & 0xe0) | NAL_FU_A;
    const body = unit.subarray(1);
    const chunk = maxPayload - 2;
    for (let offset = 0; offset < body.length; offset += chunk) {
      const part = body.subarray(offset, offset + chunk);
      const fu = new Uint8Array(2 + part.length);
      const first = offset === 0;
      const last = offset + chunk >= body.length;
      fu[0] = indicator;
      fu[1] = (first ? 0x80 : 0) | (last ? 0x40 : 0) | (header & 0x1f);
      fu.set(part, 2);
      payloads.push(fu);
    }
  }
  return payloads;
}

/** Reassembles access units from RTP payloads (single NAL, STAP-A, FU-A); a lost fragment drops its NAL. */
export class H264Depacketizer {
  private units: Uint8Array[] = [];
  private fragment: Uint8Array[] | undefined;

  /** Adds one packet's payload; returns the access unit (Annex B) when the marker closes it. */
  push(payload: Uint8Array, marker: boolean): Uint8Array | undefined {
    const type = nalType(payload);
    if (type === NAL_FU_A && payload.length > 2) {
      const fuHeader = itemAt(payload, 1);
      if (fuHeader & 0x80) this.fragment = [Uint8Array.of((itemAt(payload, 0) & 0xe0) | (fuHeader & 0x1f))];
      this.fragment?.push(payload.subarray(2));
      if (fuHeader & 0x40 && this.fragment) {
        this.units.push(Buffer.concat(this.fragment));
        this.fragment = undefined;
      }
    } else if (type === NAL_STAP_A) {
      let offset = 1;
      while (offset + 2 <= payload.length) {
        const size = (itemAt(payload, offset) << 8) | itemAt(payload, offset + 1);
        this.units.push(payload.subarray(offset + 2, offset + 2 + size));
        offset += 2 + size;
      }
    } else if (type >= 1 && type <= 23) {
      this.units.push(payload);
    }
    if (!marker) return undefined;
    const accessUnit = this.units.length > 0 ? joinAnnexB(this.units) : undefined;
    this.units = [];
    this.fragment = undefined;
    return accessUnit;
  }

  /** A sequence gap: whatever was half-assembled is unusable. */
  reset(): void {
    this.units = [];
    this.fragment = undefined;
  }
}

/** Whether an Annex B access unit holds an IDR slice (a keyframe a new decoder can start from). */
export const isH264Keyframe = (accessUnit: Uint8Array): boolean =>
  splitAnnexB(accessUnit).some((u) => nalType(u) === NAL_IDR);
