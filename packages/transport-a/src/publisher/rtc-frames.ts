import { type AvFrame, i420Size, MEDIA_SAMPLE_RATE, VIDEO_FPS, type VideoCodecName } from "@avatar/media";
import { AudioFrame, VideoBufferType, VideoCodec, VideoFrame } from "@livekit/rtc-node";

/** The avatar's frames in transportA's native shapes: I420 video, 48 kHz mono PCM. */

export function videoFrameOf(frame: AvFrame): VideoFrame {
  const { width, height, data } = frame.video;
  if (data.byteLength !== i420Size(width, height)) {
    throw new RangeError(
      `I420 frame of ${width}x${height} needs ${i420Size(width, height)} bytes, got ${data.byteLength}`,
    );
  }
  return new VideoFrame(data, width, height, VideoBufferType.I420);
}

export function audioFrameOf(frame: AvFrame): AudioFrame {
  return new AudioFrame(frame.audio, MEDIA_SAMPLE_RATE, 1, frame.audio.length);
}

export const videoCodecOf = (codec: VideoCodecName): VideoCodec =>
  codec === "VP8" ? VideoCodec.VP8 : VideoCodec.H264;

/**
 * The video bitrate cap for a frame size: about 0.075 bits per pixel at 25 fps (720p ~1.7 Mbit/s,
 * 1080p ~3.9 Mbit/s, 360p ~0.43 Mbit/s), plenty for a portrait that moves little.
 */
export const maxVideoBitrate = (width: number, height: number): number =>
  Math.round(width * height * VIDEO_FPS * 0.075);
