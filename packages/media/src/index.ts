export { type MediaClock, systemClock, VirtualClock } from "./clock.js";
export * from "./frames.js";
export { decodeLook, LookError } from "./look/decode-look.js";
export { DEFAULT_LOOK_SCALE, generateLook } from "./look/generate/generate-look.js";
export {
  LookParamsError,
  type LookRequest,
  lookRequestOf,
  resolveLookParams,
} from "./look/generate/vocabulary.js";
export { EYE_STATES, VISEMES, type Viseme, visemeOfPhoneme } from "./look/visemes.js";
export { benchRender, type RenderCost } from "./render/bench.js";
export {
  PortraitRenderer,
  type PortraitRendererOptions,
  type RendererStats,
} from "./render/portrait-renderer.js";
export { frameToPng, renderPoster } from "./render/poster.js";
export { keyOfLook, RasterCache, sharedRasterCache } from "./render/raster-cache.js";
export type { AvatarVideoGenerator, PhonemeMark } from "./video-generator.js";
