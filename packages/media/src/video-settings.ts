import { VideoEncoding, VideoOrientation, VideoQuality, type VideoSettings } from "@avatar/contracts/common";
import type { Orientation, VideoCodecName, VideoQualityName } from "./frames.js";

export type { Orientation, VideoCodecName, VideoQualityName };

/**
 * A session's video settings (the contracts' enums) as the media stream names them: the public API's
 * words (`very_high`..`low`, `H264`/`VP8`) and the orientation. A leaf module: the tokens service and the
 * pipeline import it (`@avatar/media/video-settings`) without loading the renderer or the encoders.
 */

const QUALITY: Record<VideoQuality, VideoQualityName> = {
  [VideoQuality.VERY_HIGH]: "very_high",
  [VideoQuality.HIGH]: "high",
  [VideoQuality.MEDIUM]: "medium",
  [VideoQuality.LOW]: "low",
  [VideoQuality.UNSPECIFIED]: "high",
};

export const qualityName = (q: VideoQuality): VideoQualityName => QUALITY[q] ?? "high";

export const codecName = (e: VideoEncoding): VideoCodecName => (e === VideoEncoding.VP8 ? "VP8" : "H264");

const QUALITY_OF: Record<VideoQualityName, VideoQuality> = {
  very_high: VideoQuality.VERY_HIGH,
  high: VideoQuality.HIGH,
  medium: VideoQuality.MEDIUM,
  low: VideoQuality.LOW,
};

/** The contracts' enum of a quality's public name. */
export const qualityOf = (name: VideoQualityName): VideoQuality => QUALITY_OF[name];

/** The contracts' enum of an encoding's public name. */
export const encodingOf = (name: VideoCodecName): VideoEncoding =>
  name === "VP8" ? VideoEncoding.VP8 : VideoEncoding.H264;

export const orientationName = (o: VideoOrientation): Orientation =>
  o === VideoOrientation.VERTICAL ? "vertical" : "horizontal";

export interface StreamSettings {
  quality: VideoQualityName;
  codec: VideoCodecName;
  orientation: Orientation;
}

/** The stream a session's settings ask for (defaults: high, H264, horizontal). */
export function streamSettings(settings: VideoSettings | undefined): StreamSettings {
  return {
    quality: qualityName(settings?.quality ?? VideoQuality.UNSPECIFIED),
    codec: codecName(settings?.encoding ?? VideoEncoding.UNSPECIFIED),
    orientation: orientationName(settings?.orientation ?? VideoOrientation.UNSPECIFIED),
  };
}
