import { spawnSync } from "node:child_process";
import { ffmpegBinary } from "../src/encode/ffmpeg-binary.js";

/** Decodes a media file with ffmpeg: video frames, their size, and seconds of audio. */
export function decodeWithFfmpeg(path: string, extraInput: string[] = []) {
  const bin = ffmpegBinary();
  const probe = spawnSync(bin, ["-hide_banner", ...extraInput, "-i", path], { encoding: "utf8" });
  const size = /Video: .*?, (\d+)x(\d+)/.exec(probe.stderr);
  const width = Number(size?.[1] ?? 0);
  const height = Number(size?.[2] ?? 0);
  const video = spawnSync(
    bin,
    // Every decoded frame once (-vsync 0): by default ffmpeg makes the rate constant for rawvideo,
    // dropping frames whose times crowd together and repeating others, which is not what decodes.
    [
      "-v",
      "error",
      ...extraInput,
      "-i",
      path,
      "-map",
      "0:v:0",
      "-vsync",
      "0",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "yuv420p",
      "-",
    ],
    {
      maxBuffer: 1 << 30,
    },
  );
  const frameBytes = width * height * 1.5;
  const hasAudio = /Audio: /.test(probe.stderr);
  const audio = hasAudio
    ? spawnSync(
        bin,
        ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"],
        {
          maxBuffer: 1 << 30,
        },
      )
    : undefined;
  return {
    width,
    height,
    videoFrames: frameBytes > 0 ? Math.floor(video.stdout.length / frameBytes) : 0,
    videoErrors: video.stderr.toString(),
    audioSeconds: audio ? audio.stdout.length / 2 / 48_000 : 0,
    pcm: audio
      ? new Int16Array(audio.stdout.buffer, audio.stdout.byteOffset, audio.stdout.length / 2)
      : new Int16Array(),
  };
}
