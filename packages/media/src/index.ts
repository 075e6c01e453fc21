export { type MediaClock, systemClock, VirtualClock } from "./clock.js";
export { liveEncoderPids, liveEncoderProcesses } from "./encode/encoder-process.js";
export { ffmpegBinary } from "./encode/ffmpeg-binary.js";
export { OpusEncoder } from "./encode/opus-encoder.js";
export { VideoEncoder, type VideoEncoderStats } from "./encode/video-encoder.js";
export type { EncodedVideoFrame, VideoEncoding } from "./encode/video-encoding.js";
export * from "./frames.js";
export { decodeLook } from "./look/decode-look.js";
export { DEFAULT_LOOK_SCALE, generateLook } from "./look/generate/generate-look.js";
export { LOOK_GENERATOR_VERSION } from "./look/generate/generator-version.js";
export {
  LookParamsError,
  type LookRequest,
  lookRequestOf,
  resolveLookParams,
} from "./look/generate/vocabulary.js";
export { LookError } from "./look/look-error.js";
export { EYE_STATES, VISEMES, type Viseme, visemeOfPhoneme } from "./look/visemes.js";
export { LookWorkerPool, sharedLookWorkers } from "./look-worker/pool.js";
export {
  MAX_VIEWERS_PER_SESSION,
  MediaSession,
  type MediaSessionOptions,
  type MediaSessionStats,
} from "./media-session.js";
export { MkvRecorder, type RecordingSummary } from "./record/recorder.js";
export { benchRender, type RenderCost } from "./render/bench.js";
export {
  PortraitRenderer,
  type PortraitRendererOptions,
  type RendererObserver,
  type RendererStats,
} from "./render/portrait-renderer.js";
export { frameToPng } from "./render/poster.js";
export { keyOfLook, RasterCache, sharedRasterCache } from "./render/raster-cache.js";
export { renderPoster } from "./render/render-poster.js";
export type { AvatarVideoGenerator, PhonemeMark } from "./video-generator.js";
export { livePeerConnections } from "./webrtc/peer-connection.js";
export { type RtcSettings, readRtcSettings } from "./webrtc/rtc-settings.js";
export { MAX_OFFER_BYTES } from "./webrtc/sdp-offer.js";
export { isWhepError, WhepError, type WhepErrorKind } from "./webrtc/whep-errors.js";
export {
  type ReceivedAudioPacket,
  type ReceivedSenderReport,
  type ReceivedVideoFrame,
  type WhepNegotiator,
  WhepViewer,
  type WhepViewerOptions,
  whepOverHttp,
} from "./webrtc/whep-viewer.js";
