import type { VideoCodecName } from "../frames.js";
import { H264Depacketizer, isH264Keyframe } from "../rtp/h264.js";
import { type RtpPacket, SequenceGaps } from "../rtp/rtp-packet.js";
import { isVp8Keyframe, Vp8Depacketizer } from "../rtp/vp8.js";
import { KeyframeGate } from "./keyframe-gate.js";

/** What one video RTP packet gave: the packets lost before it, and the frame it completed, if any. */
export interface VideoReceived {
  lost: number;
  frame?: { data: Uint8Array; keyframe: boolean };
  /** It completed a frame that cannot be decoded (after a loss, before a keyframe): not delivered. */
  skipped?: true;
}

/**
 * One video stream's RTP in, whole frames out: reassembled by the codec's depacketizer, and after a gap
 * in the sequence held back until a keyframe, which is asked for (KeyframeGate).
 */
export class VideoReceiver {
  private readonly gaps = new SequenceGaps();
  private readonly h264 = new H264Depacketizer();
  private readonly vp8 = new Vp8Depacketizer();
  private readonly gate: KeyframeGate;

  constructor(
    private readonly codec: () => VideoCodecName,
    askForKeyframe: () => boolean,
    now?: () => number,
  ) {
    this.gate = new KeyframeGate(askForKeyframe, now);
  }

  push(packet: RtpPacket): VideoReceived {
    const lost = this.gaps.next(packet.sequenceNumber);
    if (lost > 0) {
      this.h264.reset();
      this.vp8.reset();
      this.gate.lost();
    }
    const h264 = this.codec() === "H264";
    const data = h264
      ? this.h264.push(packet.payload, packet.marker)
      : this.vp8.push(packet.payload, packet.marker);
    if (!data) return { lost };
    const keyframe = h264 ? isH264Keyframe(data) : isVp8Keyframe(data);
    if (!this.gate.admit(keyframe)) return { lost, skipped: true };
    return { lost, frame: { data, keyframe } };
  }
}
