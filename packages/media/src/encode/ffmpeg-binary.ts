import { createRequire } from "node:module";

/**
 * Which ffmpeg runs the encoders: `FFMPEG_PATH` when set (e.g. Debian's /usr/bin/ffmpeg), else the static
 * build that `@ffmpeg-installer/ffmpeg` installs from npm for this platform (libx264, libvpx inside), else
 * `ffmpeg` on the PATH.
 */
export function ffmpegBinary(env: Record<string, string | undefined> = process.env): string {
  const configured = env.FFMPEG_PATH?.trim();
  if (configured) return configured;
  try {
    const installer = createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { path: string };
    return installer.path;
  } catch {
    return "ffmpeg";
  }
}
