import { VIDEO_FPS, type VideoCodecName } from "../frames.js";

/** What a session's video encoder makes: codec and frame size (from `videoSize`). */
export interface VideoEncoding {
  codec: VideoCodecName;
  width: number;
  height: number;
}

/** One encoded video frame, tied to the AvFrame it came from. */
export interface EncodedVideoFrame {
  /** The source AvFrame's index. */
  index: number;
  codec: VideoCodecName;
  /** H264: an Annex B access unit (SPS and PPS in front of every keyframe); VP8: one frame. */
  data: Uint8Array;
  keyframe: boolean;
}

/** Target bitrate, kbit/s: by the longer side, so vertical embeds get the same as horizontal. */
export function videoBitrateKbps(encoding: VideoEncoding): number {
  const side = Math.max(encoding.width, encoding.height);
  if (side >= 1920) return 4500;
  if (side >= 1280) return 2500;
  if (side >= 854) return 1200;
  return 800;
}

/** Frames an encoder process is given before the first real one, their output discarded (EncoderProcess). */
export const WARM_UP_FRAMES = 1;

/** A keyframe at least this often even when nobody asks (a safety net; viewers ask with PLI). */
const KEYFRAME_INTERVAL_FRAMES = 10 * VIDEO_FPS;

/**
 * ffmpeg's arguments: raw I420 frames on stdin at 25 fps, one encoded frame per input frame out on
 * stdout, each flushed at once. H264 comes in FLV (framed, with the frame's timestamp), VP8 in IVF.
 * The second input frame is a keyframe too: the first is a warm-up (see EncoderProcess), so that the
 * encoder's set-up is done before the frame a viewer waits for.
 */
export function ffmpegVideoArgs(encoding: VideoEncoding): string[] {
  const kbps = videoBitrateKbps(encoding);
  const input = [
    "-hide_banner",
    "-loglevel",
    "error",
    "-nostdin",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "yuv420p",
    "-s",
    `${encoding.width}x${encoding.height}`,
    "-framerate",
    String(VIDEO_FPS),
    "-i",
    "pipe:0",
    "-an",
    // One output per input, in order, never duplicated or held back to even out the rate.
    "-vsync",
    "passthrough",
  ];
  const rate = ["-b:v", `${kbps}k`, "-maxrate", `${kbps}k`, "-bufsize", `${kbps}k`];
  const codec =
    encoding.codec === "H264"
      ? [
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-tune",
          "zerolatency",
          "-profile:v",
          "baseline",
          "-pix_fmt",
          "yuv420p",
          "-g",
          String(KEYFRAME_INTERVAL_FRAMES),
          ...rate,
          "-threads",
          "1",
          "-f",
          "flv",
        ]
      : [
          "-c:v",
          "libvpx",
          "-deadline",
          "realtime",
          "-cpu-used",
          "8",
          "-lag-in-frames",
          "0",
          "-auto-alt-ref",
          "0",
          "-error-resilient",
          "1",
          "-g",
          String(KEYFRAME_INTERVAL_FRAMES),
          ...rate,
          "-threads",
          "1",
          "-f",
          "ivf",
        ];
  const warmedKeyframe = [
    "-force_key_frames",
    `expr:eq(n,${WARM_UP_FRAMES})`,
    ...(encoding.codec === "H264" ? ["-forced-idr", "1"] : []),
  ];
  return [...input, ...codec, ...warmedKeyframe, "-flush_packets", "1", "pipe:1"];
}
