/**
 * The avatar's media stream as the renderer produces it and the encoders and transports consume it:
 * paired video and audio frames at a fixed rate. This module owns the stream's vocabulary (rates,
 * sizes, frame shapes); everything else imports it from here.
 */

/** Every avatar video runs at 25 frames per second (contract section 7). */
export const VIDEO_FPS = 25;
/** One frame's interval, ms. */
export const FRAME_MS = 1000 / VIDEO_FPS;

/** The media stream's audio: PCM s16 mono at 48 kHz (Opus on the wire). */
export const MEDIA_SAMPLE_RATE = 48_000;
/** Audio samples paired with one video frame (40 ms at 48 kHz). */
export const SAMPLES_PER_FRAME = (MEDIA_SAMPLE_RATE * FRAME_MS) / 1000;

/** The RTP clock of video (90 kHz for every video codec). */
export const VIDEO_RTP_CLOCK = 90_000;

/** A raw video frame, I420 (planar Y, then U and V at half width and height), `width` and `height` even. */
export interface VideoFrameI420 {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Bytes of an I420 frame of this size. */
export const i420Size = (width: number, height: number): number =>
  width * height + 2 * ((width / 2) * (height / 2));

/** One step of the stream: a video frame and the 40 ms of voice that plays with it. */
export interface AvFrame {
  /** Frames since the stream started; the frame covers [at, at + FRAME_MS). */
  index: number;
  /** Session clock (epoch ms) at which this frame's interval starts. */
  at: number;
  video: VideoFrameI420;
  /** SAMPLES_PER_FRAME samples at MEDIA_SAMPLE_RATE: the avatar's voice, silence when it says nothing. */
  audio: Int16Array;
  /** How open the drawn mouth is, 0 (closed) to 1 (widest): what tests and metrics read. */
  mouthOpen: number;
  /** Whether voice audio (not silence) plays during this frame. */
  speaking: boolean;
  /** Set on the frame in which the last sample of a flushed utterance plays (LiveKit's playback finished). */
  utteranceEnd?: boolean;
}

export type VideoQualityName = "very_high" | "high" | "medium" | "low";
export type Orientation = "horizontal" | "vertical";
export type VideoCodecName = "H264" | "VP8";

/** Width and height of each quality, horizontal (16:9); vertical (9:16) is the same size turned. */
const HORIZONTAL: Record<VideoQualityName, { width: number; height: number }> = {
  very_high: { width: 1920, height: 1080 },
  high: { width: 1280, height: 720 },
  medium: { width: 854, height: 480 },
  low: { width: 640, height: 360 },
};

/** The frame size of a quality and orientation (every size is even, as I420 needs). */
export function videoSize(quality: VideoQualityName, orientation: Orientation = "horizontal") {
  const size = HORIZONTAL[quality];
  return orientation === "horizontal" ? { ...size } : { width: size.height, height: size.width };
}
