/**
 * `pnpm bench:media`: the avatar's media on this machine, side by side in one run.
 *
 * - the floor: the avatar's own frames (rendered speaking) through the bare encoder, CPU per frame;
 * - ours: render + encode + send to one WHEP viewer in real time, CPU per frame (this process and its
 *   encoder), and its ratio to the floor (target <= 1.5);
 * - CPU per session at each quality;
 * - the most concurrent speaking 720p H264 sessions that keep 25 fps (target >= 12);
 * - first frame after a viewer's answer (target <= 500 ms), and the audio/video offset a receiver's
 *   clock mapping gives (the mouth is drawn from the same 40 ms of audio it plays with, so the source
 *   offset is 0 by construction; the browser test measures the offset on screen and in the speaker).
 *
 * BENCH_MEDIA_QUALITIES (default all), BENCH_MEDIA_SECONDS (default 5), BENCH_MEDIA_MAX_SESSIONS (24).
 */

import { cpus, loadavg } from "node:os";
import {
  generateLook,
  lookRequestOf,
  PortraitRenderer,
  systemClock,
  type VideoQualityName,
  VirtualClock,
} from "@avatar/media";
import { bareEncoderCost, concurrentSessions, type FrameSource, sessionCost } from "@avatar/media/bench";
import { LocalEspeakSynthesizer, samplesFromBytes, speechOf } from "@avatar/providers";

const QUALITIES = (process.env.BENCH_MEDIA_QUALITIES ?? "very_high,high,medium,low").split(
  ",",
) as VideoQualityName[];
const SECONDS = Number(process.env.BENCH_MEDIA_SECONDS ?? 5);
const MAX_SESSIONS = Number(process.env.BENCH_MEDIA_MAX_SESSIONS ?? 24);

const SPEECH =
  "Hello, and welcome. I am the avatar of this service, and I am speaking to you right now. " +
  "My lips follow my voice, and while I listen I blink and move a little.";

/** The avatar's voice for the benchmark: the local synthesizer's speech with its phoneme timing. */
async function speech(): Promise<
  { pcm: Int16Array; phonemes: { phoneme: string; startMs: number; durationMs: number }[]; ms: number }[]
> {
  const espeak = new LocalEspeakSynthesizer();
  const chunks = [];
  for await (const { pcm, phonemes } of speechOf(espeak, {
    text: SPEECH,
    voiceId: "",
    settings: {},
    language: "en",
  })) {
    const samples = samplesFromBytes(pcm);
    chunks.push({ pcm: samples, phonemes: phonemes ?? [], ms: samples.length / 24 });
  }
  await espeak.close();
  return chunks;
}

/** Frames of the demo avatar Ada speaking without pause (its voice pushed again before it runs out). */
function speakingAvatar(voice: Awaited<ReturnType<typeof speech>>): FrameSource {
  const look = generateLook(
    lookRequestOf({
      seed: "ada",
      presentation: "feminine",
      skin_tone: "brown",
      hair_style: "bun",
      hair_color: "black",
      outfit: "vneck",
      background: "office",
    }),
  );
  const totalMs = voice.reduce((n, c) => n + c.ms, 0);
  const push = (r: PortraitRenderer) => {
    for (const c of voice) r.pushAudio(c.pcm, { phonemes: c.phonemes });
  };
  return {
    async stream(quality) {
      const renderer = await PortraitRenderer.create({ look, quality, clock: systemClock });
      push(renderer);
      const refill = setInterval(() => push(renderer), totalMs - 500);
      refill.unref();
      return renderer;
    },
    async stills(quality, count) {
      const clock = new VirtualClock();
      const renderer = await PortraitRenderer.create({ look, quality, clock });
      push(renderer);
      const frames: Uint8Array[] = [];
      for (let i = 0; i < count; i++) {
        clock.advance(40);
        frames.push(renderer.renderFrame(clock.now()).video.data.slice());
      }
      return frames;
    },
  };
}

const round = (x: number | undefined, digits = 2) => (x === undefined ? "-" : x.toFixed(digits));

async function main() {
  console.log(
    `bench:media on ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  const voice = await speech();
  const avatar = speakingAvatar(voice);

  console.log("\nper frame, speaking avatar, one WHEP viewer (CPU ms; ours = render + encode + send)");
  console.log(
    "quality    codec  floor(enc)  ours   ratio  enc-in-ours  cpu%/session  first-frame  av-offset",
  );
  for (const quality of QUALITIES) {
    for (const codec of ["H264", "VP8"] as const) {
      const floor = await bareEncoderCost(codec, quality, 100, avatar);
      const ours = await sessionCost(codec, quality, SECONDS, 1, avatar);
      console.log(
        [
          quality.padEnd(10),
          codec.padEnd(6),
          round(floor.cpuMsPerFrame).padStart(9),
          round(ours.cpuMsPerFrame).padStart(6),
          round(ours.cpuMsPerFrame / floor.cpuMsPerFrame).padStart(6),
          round(ours.encoderCpuMsPerFrame).padStart(11),
          round(ours.cpuPercentPerSession, 1).padStart(12),
          `${round(ours.firstFrameAfterAnswerMs[0], 0)} ms`.padStart(11),
          `${round(ours.syncOffsetMs, 1)} ms`.padStart(10),
        ].join(" "),
      );
    }
  }

  console.log("\nconcurrent speaking 720p H264 sessions, one viewer each (every viewer >= 24 fps?)");
  let kept = 0;
  for (let count = 4; count <= MAX_SESSIONS; count += 4) {
    const r = await concurrentSessions(count, "H264", "high", SECONDS, avatar);
    console.log(
      `${String(count).padStart(3)} sessions: min ${round(r.minFps, 1)} fps, mean ${round(r.meanFps, 1)} fps${r.keeps25 ? "" : "  <- below 24"}`,
    );
    if (!r.keeps25) break;
    kept = count;
  }
  console.log(
    `most concurrent speaking 720p H264 sessions kept at 25 fps: ${kept}${kept >= MAX_SESSIONS ? "+" : ""}`,
  );
}

await main();
process.exit(0);
