/** The picture size an H264 SPS declares (ITU-T H.264 7.3.2.1.1), cropping applied. */

class BitReader {
  private bit = 0;
  constructor(private readonly bytes: Uint8Array) {}

  u(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.bytes[this.bit >> 3];
      if (byte === undefined) throw new Error("SPS ended early");
      v = (v << 1) | ((byte >> (7 - (this.bit & 7))) & 1);
      this.bit++;
    }
    return v >>> 0;
  }

  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) zeros++;
    return (1 << zeros) - 1 + (zeros > 0 ? this.u(zeros) : 0);
  }

  se(): number {
    const k = this.ue();
    return k & 1 ? (k + 1) / 2 : -(k / 2);
  }
}

/** RBSP: emulation prevention bytes (00 00 03) removed. */
function removeEmulationPrevention(nal: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (const [i, byte] of nal.entries()) {
    if (i >= 2 && byte === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    out.push(byte);
  }
  return Uint8Array.from(out);
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

export function h264SpsSize(sps: Uint8Array): { width: number; height: number } {
  const r = new BitReader(removeEmulationPrevention(sps.subarray(1)));
  const profile = r.u(8);
  r.u(16); // constraint flags, level
  r.ue(); // seq_parameter_set_id
  let chromaFormat = 1;
  if (HIGH_PROFILES.has(profile)) {
    chromaFormat = r.ue();
    if (chromaFormat === 3) r.u(1);
    r.ue();
    r.ue();
    r.u(1);
    if (r.u(1)) {
      for (let i = 0; i < (chromaFormat === 3 ? 12 : 8); i++) {
        if (!r.u(1)) continue;
        let last = 8;
        let next = 8;
        for (let j = 0; j < (i < 6 ? 16 : 64); j++) {
          if (next !== 0) next = (last + r.se() + 256) % 256;
          last = next === 0 ? last : next;
        }
      }
    }
  }
  r.ue(); // log2_max_frame_num_minus4
  const pocType = r.ue();
  if (pocType === 0) r.ue();
  else if (pocType === 1) {
    r.u(1);
    r.se();
    r.se();
    const n = r.ue();
    for (let i = 0; i < n; i++) r.se();
  }
  r.ue(); // max_num_ref_frames
  r.u(1);
  const widthMbs = r.ue() + 1;
  const heightUnits = r.ue() + 1;
  const frameMbsOnly = r.u(1);
  if (!frameMbsOnly) r.u(1);
  r.u(1);
  let crop = { left: 0, right: 0, top: 0, bottom: 0 };
  if (r.u(1)) crop = { left: r.ue(), right: r.ue(), top: r.ue(), bottom: r.ue() };
  const cropX = chromaFormat === 0 || chromaFormat === 3 ? 1 : 2;
  const cropY = (chromaFormat === 1 ? 2 : 1) * (2 - frameMbsOnly);
  return {
    width: widthMbs * 16 - cropX * (crop.left + crop.right),
    height: (2 - frameMbsOnly) * heightUnits * 16 - cropY * (crop.top + crop.bottom),
  };
}
