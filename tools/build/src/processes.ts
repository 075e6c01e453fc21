/**
 * Every process `pnpm build` makes runnable JavaScript of: its package folder (whose package.json lists
 * the npm packages its bundle may import), and files it needs beside the bundle.
 */
export interface ProcessBuild {
  /** The package folder, from the repository root; the entry is `src/main.ts`, the bundle `dist/main.js`. */
  dir: string;
  /** Files copied next to the bundle (from the repository root), e.g. a worker loaded by URL. */
  assets?: string[];
  /** npm packages those assets import, which must be production dependencies of the package too. */
  assetImports?: string[];
  /** Worker thread entries bundled beside the process's bundle, each under its own name. */
  workers?: { entry: string; out: string }[];
}

/** The eSpeak worker and the engine module it imports. */
const ESPEAK_WORKER = [
  "packages/providers/src/tts/espeak-worker.mjs",
  "packages/providers/src/tts/espeak-engine.mjs",
];
/** What the eSpeak worker imports, and ffmpeg's package the encoders resolve at run time (createRequire). */
const RUNTIME_IMPORTS = ["@echogarden/espeak-ng-emscripten", "@ffmpeg-installer/ffmpeg"];
/** The look worker thread (rasterizing, posters, generating looks), found beside the bundle by name. */
const LOOK_WORKER = { entry: "packages/media/src/look-worker/thread.ts", out: "look-worker.mjs" };
/** The tokens service's presigning thread (ES256 presignatures), found beside the bundle by name. */
const PRESIGN_WORKER = { entry: "services/tokens/src/presign/thread.ts", out: "presign-worker.mjs" };

export const PROCESSES: ProcessBuild[] = [
  { dir: "services/tokens", workers: [PRESIGN_WORKER] },
  { dir: "services/catalog", workers: [LOOK_WORKER] },
  { dir: "services/agents" },
  { dir: "services/memory" },
  { dir: "services/sessions" },
  {
    dir: "services/pipeline",
    assets: ESPEAK_WORKER,
    assetImports: RUNTIME_IMPORTS,
    workers: [LOOK_WORKER],
  },
  { dir: "services/webhooks" },
  { dir: "gateway" },
  {
    dir: "suite",
    assets: ESPEAK_WORKER,
    assetImports: RUNTIME_IMPORTS,
    workers: [LOOK_WORKER, PRESIGN_WORKER],
  },
  { dir: "tools/avatarctl" },
];
