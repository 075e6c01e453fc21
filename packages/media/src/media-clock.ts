import { FRAME_MS } from "./frames.js";
import { random32 } from "./rtp/rtp-packet.js";

/**
 * One media clock for both tracks of a session: frame N's video has RTP time videoBase + N * 3600
 * (90 kHz) and its audio audioBase + N * 1920 (48 kHz), so a receiver that maps both through the sender
 * reports lines frame N's picture up with frame N's sound. The wall-clock anchor is the moment the
 * latest frame was sent out (its audio at once, its video into the encoder); sender reports extrapolate
 * from it with the same instant for both tracks.
 */
export class MediaClock {
  readonly videoBase = random32();
  readonly audioBase = random32();
  private anchor: { index: number; wallMs: number } | undefined;

  constructor(
    private readonly videoRate: number,
    private readonly audioRate: number,
  ) {}

  videoTimestamp(index: number): number {
    return (this.videoBase + Math.round((index * FRAME_MS * this.videoRate) / 1000)) >>> 0;
  }

  /** RTP time of the audio starting `offsetSamples` into frame `index`. */
  audioTimestamp(index: number, offsetSamples = 0): number {
    return (this.audioBase + Math.round((index * FRAME_MS * this.audioRate) / 1000) + offsetSamples) >>> 0;
  }

  /** Frame `index` was sent out at wall time `wallMs`. */
  sent(index: number, wallMs: number): void {
    this.anchor = { index, wallMs };
  }

  /** Both tracks' RTP time at wall time `wallMs` (for sender reports); undefined before any frame left. */
  at(wallMs: number): { video: number; audio: number } | undefined {
    if (!this.anchor) return undefined;
    const mediaMs = this.anchor.index * FRAME_MS + (wallMs - this.anchor.wallMs);
    return {
      video: (this.videoBase + Math.round((mediaMs * this.videoRate) / 1000)) >>> 0,
      audio: (this.audioBase + Math.round((mediaMs * this.audioRate) / 1000)) >>> 0,
    };
  }
}
