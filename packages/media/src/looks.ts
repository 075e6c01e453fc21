/**
 * Avatars' looks as the catalog needs them: check, generate and picture looks, all drawn in look worker
 * threads (look-worker/pool.ts). Nothing here loads the drawing library (a test keeps it so), so a
 * process that only stores looks does not hold it while idle. `@avatar/media/looks`.
 */
export { LOOK_GENERATOR_VERSION } from "./look/generate/generator-version.js";
export {
  LookParamsError,
  type LookRequest,
  lookRequestOf,
  resolveLookParams,
} from "./look/generate/vocabulary.js";
export { LookError } from "./look/look-error.js";
export { LookWorkerPool, sharedLookWorkers } from "./look-worker/pool.js";
export { keyOfLook, RasterCache, sharedRasterCache } from "./render/raster-cache.js";
export { renderPoster } from "./render/render-poster.js";
