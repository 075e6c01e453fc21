import OpusScript from "opusscript";
import { MEDIA_SAMPLE_RATE } from "../frames.js";

/** Opus packets are 20 ms: two per 40 ms video frame. */
export const OPUS_FRAME_SAMPLES = (MEDIA_SAMPLE_RATE * 20) / 1000;
/** The RTP clock of Opus is 48 kHz whatever the content (RFC 7587). */
export const OPUS_RTP_CLOCK = 48_000;

/**
 * Opus, 48 kHz mono, 20 ms packets, through opusscript (libopus compiled to WebAssembly: installs from
 * npm with nothing to build, ~0.15 ms a packet here).
 */
export class OpusEncoder {
  private readonly encoder: OpusScript;
  private freed = false;

  constructor(bitrate = 32_000) {
    this.encoder = new OpusScript(MEDIA_SAMPLE_RATE, 1, OpusScript.Application.AUDIO);
    this.encoder.setBitrate(bitrate);
  }

  /** Encodes a whole number of 20 ms frames of PCM s16 mono; one packet per 20 ms. */
  encode(pcm: Int16Array): Uint8Array[] {
    if (this.freed) throw new Error("opus encoder is closed");
    if (pcm.length % OPUS_FRAME_SAMPLES !== 0) {
      throw new Error(`opus takes multiples of ${OPUS_FRAME_SAMPLES} samples, got ${pcm.length}`);
    }
    const packets: Uint8Array[] = [];
    for (let offset = 0; offset < pcm.length; offset += OPUS_FRAME_SAMPLES) {
      const frame = pcm.subarray(offset, offset + OPUS_FRAME_SAMPLES);
      const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
      packets.push(Uint8Array.from(this.encoder.encode(bytes, OPUS_FRAME_SAMPLES)));
    }
    return packets;
  }

  /** Frees the WebAssembly encoder's memory. */
  close(): void {
    if (this.freed) return;
    this.freed = true;
    this.encoder.delete();
  }
}
