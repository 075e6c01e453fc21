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

/**
 * The frames of a media file as ffmpeg's framecrc lists them: each frame's stream and time (in that
 * stream's time base), each decoded frame once (-vsync 0). `outputArgs` `["-c", "copy"]` lists them as
 * stored instead (times in the container's base) without decoding.
 */
export function framesOf(path: string, outputArgs: string[] = []) {
  const run = spawnSync(
    ffmpegBinary(),
    ["-v", "error", "-i", path, "-vsync", "0", ...outputArgs, "-f", "framecrc", "-"],
    { encoding: "utf8" },
  );
  const frames = run.stdout
    .split("\n")
    .filter((line) => /^\d+,/.test(line))
    .map((line) => {
      const [stream, , pts] = line.split(",").map((field) => Number(field.trim()));
      return { stream: stream as number, pts: pts as number };
    });
  return { frames, status: run.status, errors: run.stderr };
}
