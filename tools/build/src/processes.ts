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
}

const ESPEAK_WORKER = "packages/providers/src/tts/espeak-worker.mjs";
/** What the eSpeak worker imports, and ffmpeg's package the encoders resolve at run time (createRequire). */
const RUNTIME_IMPORTS = ["espeak-ng", "@echogarden/espeak-ng-emscripten", "@ffmpeg-installer/ffmpeg"];

export const PROCESSES: ProcessBuild[] = [
  { dir: "services/tokens" },
  { dir: "services/catalog" },
  { dir: "services/agents" },
  { dir: "services/memory" },
  { dir: "services/sessions" },
  { dir: "services/pipeline", assets: [ESPEAK_WORKER], assetImports: RUNTIME_IMPORTS },
  { dir: "services/webhooks" },
  { dir: "gateway" },
  { dir: "suite", assets: [ESPEAK_WORKER], assetImports: RUNTIME_IMPORTS },
  { dir: "tools/avatarctl" },
];
