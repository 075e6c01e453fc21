/**
 * Avatars' looks without the rest of the media stack (no encoders, no WebRTC): what the catalog needs to
 * check, generate and picture looks. `@avatar/media/looks`.
 */
export { decodeLook, LookError } from "./look/decode-look.js";
export { DEFAULT_LOOK_SCALE, generateLook, LOOK_GENERATOR_VERSION } from "./look/generate/generate-look.js";
export {
  LookParamsError,
  type LookRequest,
  lookRequestOf,
  resolveLookParams,
} from "./look/generate/vocabulary.js";
export { LookWorkerPool, sharedLookWorkers } from "./look-worker/pool.js";
export { frameToPng, renderPoster } from "./render/poster.js";
export { keyOfLook, RasterCache, sharedRasterCache } from "./render/raster-cache.js";
