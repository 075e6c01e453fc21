import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { VideoCodecName } from "@avatar/media";
import { runConversation } from "@avatar/session-client";
import { browserAvailable, launchChromium } from "@avatar/testkit/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChatCompletionsServer } from "../../packages/providers/test/servers/chat-completions-server.js";
import { embedInState, startConversation } from "./embed-page-support.js";
import { MediaServer } from "./media-server.js";
import { ADA } from "./sessions-support.js";
import { atNextSecond, json } from "./support.js";

/**
 * The avatar seen and heard in a real browser: the embed page of a sandbox FULL session, a typed
 * message answered by the language model (a local chat-completions server) and spoken by the local
 * voice, the video and voice received over WHEP. Measured inside the page: frames decoded per second
 * and freezes (getStats), the mouth (the luma of each decoded frame where the mouth is drawn) and the
 * voice (WebAudio on the received track), and how their onsets line up (ITU-R BT.1359: audio at most
 * 45 ms ahead of the picture, at most 125 ms behind). For H264 and VP8. The server runs in a process of
 * its own (media-server-process.ts), as a deployment's shares no event loop with its viewers' browsers.
 */

const available = browserAvailable("the avatar media browser test");
const SHOTS = path.resolve(".ci/out/media");
mkdirSync(SHOTS, { recursive: true });

let server: MediaServer;
let browser: Browser;
let llm: ChatCompletionsServer;

beforeAll(async () => {
  if (!available) return;
  llm = await ChatCompletionsServer.start();
  server = await MediaServer.start({ LOCAL_LLM_URL: llm.baseUrl });
  await warmUp();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await llm?.close();
});
beforeEach(atNextSecond);

/** Three sentences with pauses between them: several voice onsets to line the mouth up with. */
const ANSWER = [
  "Hello there! ",
  "I am the avatar, and I am speaking to you now. ",
  "Watch my mouth move while you hear my voice. ",
  "Thank you for watching.",
];

/**
 * Answers the server gives before any browser watches: the same question through the language model and
 * the same sentences synthesized, watched over WHEP by the session client. A fresh process's first
 * answers cost it several times the CPU of later ones (code compiled as it is first used, then optimized;
 * the voice's first real sentences), all as each answer begins. Here the viewer's browser shares the two
 * cores with the server, and that burst held up the browser's audio playout: with the machine held to one
 * core (a CPU quota), the first browser session after one such answer had the voice's worker at 230 ms of
 * CPU in the half second after the question against 40 in the second session, the browser's audio jitter
 * buffer 80-140 ms over its target, and the voice 110-190 ms behind the mouth in the answer's first
 * third; after two, 30-80 ms. A viewer's browser has a machine of its own: judged here is the server's
 * steady state, which every session after a process's first few has.
 */
const WARM_UP_ANSWERS = 2;

async function warmUp(): Promise<void> {
  for (let k = 0; k < WARM_UP_ANSWERS; k++) {
    llm.enqueue({ kind: "stream", pieces: ANSWER });
    await runConversation({
      baseUrl: server.gatewayUrl,
      apiKey: server.apiKey,
      mode: "FULL",
      avatarId: ADA,
      sandbox: true,
      text: "Please say something",
      say: true,
      print: () => {},
      record: path.join(SHOTS, `warm-up-${k}.mkv`),
    });
  }
}

/** How long the page shows the idle avatar before the question (see the test). */
const SETTLE_MS = 15_000;

/** What the probes in the page record (they run in the page: functions, no outer names). */
interface Samples {
  /**
   * Each presented frame: when it is shown, its mouth, and from the browser's frame metadata its RTP
   * time (90 kHz), when its last packet came in, and how many frames the page had presented by then.
   */
  frames: { t: number; mouth: number; rtp?: number; received?: number; presented: number }[];
  audio: { t: number; rms: number }[];
  stats: {
    framesDecoded: number;
    freezeCount: number;
    totalFreezesDuration: number;
    /** What the browser did about loss, to tell a freeze's cause: keyframes asked for, NACKs, lost packets. */
    pliCount: number;
    nackCount: number;
    packetsLost: number;
    keyFramesDecoded: number;
    at: number;
  }[];
  /**
   * The audio's jitter buffer, as getStats sums it: seconds of delay and of target delay over the samples
   * it has emitted. What it held beyond its target (the voice that much later than planned) tells when
   * the browser's audio playout, not the stream, was late.
   */
  audioBuffer: { delay: number; target: number; emitted: number; at: number }[];
  /** Frames the mouth probe could not read, and why. */
  probeErrors: string[];
}

interface PageGlobals {
  avatarEmbed: {
    state: string;
    video: VideoLike;
    peer: { getStats(): Promise<Map<string, Record<string, unknown>>> };
  };
  performance: { now(): number };
  AudioContext: new () => AudioContextLike;
  MediaStream: new (tracks: unknown[]) => unknown;
  VideoFrame: new (source: unknown) => VideoFrameLike;
  setInterval(fn: () => void, ms: number): number;
  __probe?: Samples;
}
interface VideoLike {
  videoWidth: number;
  videoHeight: number;
  srcObject: { getAudioTracks(): unknown[] } | null;
  requestVideoFrameCallback(cb: (now: number, meta: FrameMetadata) => void): void;
}
interface FrameMetadata {
  expectedDisplayTime: number;
  presentedFrames: number;
  rtpTimestamp?: number;
  receiveTime?: number;
}
interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface VideoFrameLike {
  format: string | null;
  visibleRect: Rect;
  allocationSize(options: { rect: Rect }): number;
  copyTo(into: Uint8Array, options: { rect: Rect }): Promise<{ offset: number; stride: number }[]>;
  close(): void;
}
interface AudioContextLike {
  createMediaStreamSource(stream: unknown): { connect(node: unknown): void };
  createAnalyser(): { fftSize: number; getFloatTimeDomainData(out: Float32Array): void };
  resume(): Promise<void>;
  outputLatency?: number;
  baseLatency: number;
}

/** Starts the probes: each presented frame's mouth (mean luma darkness of the mouth box) and the voice's level. */
async function startProbes(page: Page, box: Rect) {
  await page.evaluate(async (mouth) => {
    const w = globalThis as unknown as PageGlobals;
    const video = w.avatarEmbed.video;
    const samples: Samples = { frames: [], audio: [], stats: [], audioBuffer: [], probeErrors: [] };
    w.__probe = samples;
    const REST_FRAMES = 20;
    let rest: Float64Array | undefined;
    let restFrames = 0;
    const onFrame = async (_now: number, meta: FrameMetadata) => {
      video.requestVideoFrameCallback(onFrame);
      // The mouth box of the frame as decoded (its luma plane; no conversion of the whole picture).
      const frame = new w.VideoFrame(video);
      // Formats whose first plane is luma (a software decoder's); anything else would be misread.
      if (!["I420", "I420A", "NV12"].includes(frame.format ?? "")) {
        const error = `a decoded frame in ${frame.format}, not a YUV format with a luma plane`;
        if (!samples.probeErrors.includes(error)) samples.probeErrors.push(error);
        frame.close();
        return;
      }
      const scaleX = frame.visibleRect.width / 1280;
      const scaleY = frame.visibleRect.height / 720;
      const even = (v: number) => 2 * Math.floor(v / 2);
      const rect = {
        x: even(frame.visibleRect.x + mouth.x * scaleX),
        y: even(frame.visibleRect.y + mouth.y * scaleY),
        width: even(mouth.width * scaleX),
        height: even(mouth.height * scaleY),
      };
      const data = new Uint8Array(frame.allocationSize({ rect }));
      const [luma] = await frame.copyTo(data, { rect });
      frame.close();
      // How far the mouth is from its rest: the mean luma difference from the mouth box of the first
      // frames (the avatar idle, mouth at rest, before anyone speaks), whatever the skin's tone.
      const stride = luma?.stride ?? rect.width;
      const n = rect.width * rect.height;
      rest ??= new Float64Array(n);
      let diff = 0;
      for (let row = 0; row < rect.height; row++) {
        for (let col = 0; col < rect.width; col++) {
          const p = row * rect.width + col;
          const y = data[(luma?.offset ?? 0) + row * stride + col] as number;
          if (restFrames < REST_FRAMES) rest[p] = (rest[p] as number) + y / REST_FRAMES;
          else diff += Math.abs(y - (rest[p] as number));
        }
      }
      restFrames++;
      samples.frames.push({
        t: meta.expectedDisplayTime,
        mouth: restFrames > REST_FRAMES ? diff / n : 0,
        rtp: meta.rtpTimestamp,
        received: meta.receiveTime,
        presented: meta.presentedFrames,
      });
    };
    video.requestVideoFrameCallback(onFrame);

    const audio = new w.AudioContext();
    await audio.resume();
    const source = audio.createMediaStreamSource(new w.MediaStream(video.srcObject?.getAudioTracks() ?? []));
    const analyser = audio.createAnalyser();
    analyser.fftSize = 512; // ~10 ms at 48 kHz
    source.connect(analyser);
    const buffer = new Float32Array(512);
    const latencyMs = ((audio.outputLatency ?? 0) + audio.baseLatency) * 1000;
    w.setInterval(() => {
      analyser.getFloatTimeDomainData(buffer);
      let sum = 0;
      for (const v of buffer) sum += v * v;
      samples.audio.push({ t: w.performance.now() + latencyMs, rms: Math.sqrt(sum / buffer.length) });
    }, 5);

    w.setInterval(async () => {
      for (const report of (await w.avatarEmbed.peer.getStats()).values()) {
        if (report.type === "inbound-rtp" && report.kind === "audio") {
          samples.audioBuffer.push({
            delay: Number(report.jitterBufferDelay ?? 0),
            target: Number(report.jitterBufferTargetDelay ?? 0),
            emitted: Number(report.jitterBufferEmittedCount ?? 0),
            at: w.performance.now(),
          });
        }
        if (report.type === "inbound-rtp" && report.kind === "video") {
          samples.stats.push({
            framesDecoded: Number(report.framesDecoded ?? 0),
            freezeCount: Number(report.freezeCount ?? 0),
            totalFreezesDuration: Number(report.totalFreezesDuration ?? 0),
            pliCount: Number(report.pliCount ?? 0),
            nackCount: Number(report.nackCount ?? 0),
            packetsLost: Number(report.packetsLost ?? 0),
            keyFramesDecoded: Number(report.keyFramesDecoded ?? 0),
            at: w.performance.now(),
          });
        }
      }
    }, 500);
  }, box);
}

const samplesOf = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as PageGlobals).__probe as Samples);

/** Times a signal rises above `threshold` after staying below it for at least `quietMs`. */
function onsets(points: { t: number; v: number }[], threshold: number, quietMs: number): number[] {
  const out: number[] = [];
  let lastLoud = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    if (p.v >= threshold) {
      if (p.t - lastLoud >= quietMs) out.push(p.t);
      lastLoud = p.t;
    }
  }
  return out;
}

/**
 * The audio/video offset over the whole answer: the shift of the mouth's movement that best matches
 * the voice's loudness (Pearson correlation on a 10 ms grid, over the spoken stretch). Positive: the
 * voice comes later than the mouth that goes with it.
 */
function syncLag(
  s: Samples,
  voiceLevel: number,
  within: { from: number; to: number } = { from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY },
): { ms: number; correlation: number } {
  const loudTimes = s.audio
    .filter((a) => a.rms > voiceLevel / 8 && a.t >= within.from && a.t < within.to)
    .map((a) => a.t);
  if (loudTimes.length === 0 || s.frames.length === 0) return { ms: Number.NaN, correlation: 0 };
  const from = Math.min(...loudTimes) - 500;
  const to = Math.max(...loudTimes) + 500;
  const steps = Math.floor((to - from) / 10);
  const voice = new Float64Array(steps);
  for (const a of s.audio) {
    const k = Math.floor((a.t - from) / 10);
    if (k >= 0 && k < steps) voice[k] = Math.max(voice[k] as number, a.rms);
  }
  // The picture shown at each step: the latest frame presented by then.
  const mouthAt = new Float64Array(steps);
  let f = 0;
  for (let k = 0; k < steps; k++) {
    const t = from + k * 10;
    while (f + 1 < s.frames.length && (s.frames[f + 1]?.t ?? Number.POSITIVE_INFINITY) <= t) f++;
    mouthAt[k] = s.frames[f]?.mouth ?? 0;
  }
  const pearson = (shift: number) => {
    let n = 0;
    let sx = 0;
    let sy = 0;
    let sxx = 0;
    let syy = 0;
    let sxy = 0;
    for (let k = 0; k < steps; k++) {
      const j = k - shift;
      if (j < 0 || j >= steps) continue;
      const x = voice[k] as number;
      const y = mouthAt[j] as number;
      n++;
      sx += x;
      sy += y;
      sxx += x * x;
      syy += y * y;
      sxy += x * y;
    }
    const cov = sxy - (sx * sy) / n;
    const sd = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
    return sd > 0 ? cov / sd : 0;
  };
  let best = { ms: 0, correlation: Number.NEGATIVE_INFINITY };
  for (let shift = -40; shift <= 40; shift++) {
    const c = pearson(shift);
    if (c > best.correlation) best = { ms: shift * 10, correlation: c };
  }
  return best;
}

/**
 * The longest waits between frames shown, to tell a freeze's cause: `rtpMs` is how much picture time
 * passed between the two frames (40: none missing; more: the sender never sent the frames between),
 * `receivedMs` how far apart they arrived (about `shownMs`: they came late; small: they came in time and
 * the browser showed them late), `unseen` frames presented without the page's callback.
 */
function longestGaps(s: Samples, count = 3) {
  const start = s.frames[0]?.t ?? 0;
  const gaps = s.frames.slice(1).map((f, i) => {
    const before = s.frames[i] as Samples["frames"][number];
    const rtpMs =
      f.rtp !== undefined && before.rtp !== undefined ? ((f.rtp - before.rtp) >>> 0) / 90 : undefined;
    const receivedMs =
      f.received !== undefined && before.received !== undefined ? f.received - before.received : undefined;
    return {
      atMs: Math.round(before.t - start),
      shownMs: Math.round(f.t - before.t),
      rtpMs: rtpMs === undefined ? undefined : Math.round(rtpMs),
      receivedMs: receivedMs === undefined ? undefined : Math.round(receivedMs),
      unseen: f.presented - before.presented - 1,
    };
  });
  return gaps.sort((a, b) => b.shownMs - a.shownMs).slice(0, count);
}

/**
 * Over each stats interval that ends while the voice is heard: the mean delay of the audio the jitter
 * buffer emitted beyond its mean target, the largest of them. Near 0: the voice played as the buffer
 * planned; far above: the browser played it late (its playout held up), and its lip sync then moves.
 */
function audioBufferOverTarget(s: Samples, spoken: { from: number; to: number }): number {
  const { from, to } = spoken;
  let most = 0;
  s.audioBuffer.forEach((b, i) => {
    const before = s.audioBuffer[i - 1];
    const emitted = before ? b.emitted - before.emitted : 0;
    if (!before || emitted <= 0 || b.at < from || before.at > to) return;
    const over = (b.delay - before.delay - (b.target - before.target)) / emitted;
    most = Math.max(most, Math.round(over * 1000));
  });
  return most;
}

function freezeSeenAfter(s: Samples): number | undefined {
  const first = s.stats[0];
  const frozen = s.stats.find((x) => x.freezeCount > 0);
  return first && frozen ? Math.round(frozen.at - first.at) : undefined;
}

/** What the page saw and heard, reduced to the figures the test judges. */
function measure(s: Samples) {
  const first = s.stats[0];
  const last = s.stats.at(-1);
  const fps = first && last ? (last.framesDecoded - first.framesDecoded) / ((last.at - first.at) / 1000) : 0;
  const voiceLevel = Math.max(0, ...s.audio.map((a) => a.rms));
  const loud = (t: number, within: number) =>
    s.audio.some((a) => Math.abs(a.t - t) < within && a.rms > voiceLevel / 8);
  const speaking = s.frames.filter((f) => loud(f.t, 30));
  const silent = s.frames.filter((f) => !loud(f.t, 300));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const restMouth = mean(silent.map((f) => f.mouth));
  const talkingMouth = mean(speaking.map((f) => f.mouth));
  // How much the mouth moves from one frame to the next: speech opens and closes it several times a
  // second, while the idle sway of the head shifts the mouth region only slowly.
  const motion = (keep: (f: Samples["frames"][number]) => boolean) =>
    mean(
      s.frames.flatMap((f, i) => {
        const before = s.frames[i - 1];
        return before && keep(f) ? [Math.abs(f.mouth - before.mouth)] : [];
      }),
    );
  const talkingMotion = motion((f) => loud(f.t, 30));
  const restMotion = motion((f) => !loud(f.t, 300));
  const widest = Math.max(restMouth, ...s.frames.map((f) => f.mouth));
  const audioOnsets = onsets(
    s.audio.map((a) => ({ t: a.t, v: a.rms })),
    voiceLevel / 6,
    200,
  );
  const mouthOnsets = onsets(
    s.frames.map((f) => ({ t: f.t, v: f.mouth })),
    restMouth + (widest - restMouth) / 3,
    200,
  );
  const lag = syncLag(s, voiceLevel);
  // The offset in each third of the spoken stretch: whether the browser's lip sync was still moving.
  const spoken = s.audio.filter((a) => a.rms > voiceLevel / 8).map((a) => a.t);
  const [from, to] = [Math.min(...spoken), Math.max(...spoken) + 1];
  const overTarget = audioBufferOverTarget(s, { from, to });
  const third = (k: number) => from + ((to - from) * k) / 3;
  const byThird = [0, 1, 2].map((k) => syncLag(s, voiceLevel, { from: third(k), to: third(k + 1) }).ms);
  const pairs = audioOnsets.map((a) => {
    const m = mouthOnsets.reduce(
      (best, x) => (Math.abs(x - a) < Math.abs(best - a) ? x : best),
      Number.POSITIVE_INFINITY,
    );
    return { audio: Math.round(a), mouth: Math.round(m), audioMinusMouth: Math.round(a - m) };
  });
  return {
    fps: Math.round(fps * 10) / 10,
    freezes: last?.freezeCount ?? 0,
    /** When the first freeze was seen (ms after the first stats sample: < 500 is the video's start). */
    firstFreezeAfterMs: freezeSeenAfter(s),
    longestGaps: longestGaps(s),
    keyframeRequests: last?.pliCount ?? 0,
    nacks: last?.nackCount ?? 0,
    packetsLost: last?.packetsLost ?? 0,
    keyframesDecoded: last?.keyFramesDecoded ?? 0,
    voiceLevel,
    speakingFrames: speaking.length,
    silentFrames: silent.length,
    restMouth,
    talkingMouth,
    restMotion,
    talkingMotion,
    audioOnsets: audioOnsets.length,
    mouthOnsets: mouthOnsets.length,
    /** How much later the voice is than the mouth it drives (ms; negative: the voice leads). */
    audioBehindMouthMs: lag.ms,
    audioBehindMouthByThirdMs: byThird,
    correlation: lag.correlation,
    /** The most the browser's audio jitter buffer held beyond its target while the voice played (ms). */
    audioBufferOverTargetMs: overTarget,
    pairs,
  };
}

describe.skipIf(!available)("the avatar in a browser: seen and heard, in sync", () => {
  for (const codec of ["H264", "VP8"] as VideoCodecName[]) {
    it(`plays a spoken answer with the mouth following the voice (${codec})`, async () => {
      const created = await server.request("POST", "/v2/embeddings", {
        avatar_id: ADA,
        is_sandbox: true,
        video_settings: { encoding: codec },
      });
      const embed = (await json(created)).data;
      const mouth = await server.ask({ op: "mouthBox", avatarId: ADA });

      llm.enqueue({ kind: "stream", pieces: ANSWER });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await server.ask({ op: "watchStalls" });
      await page.goto(embed.url);
      await startConversation(page);
      await startProbes(page, mouth);
      // Idle (the avatar breathes and blinks, its mouth at rest) for as long as the browser's lip sync
      // takes to settle: Chromium starts the audio ~100 ms behind the picture (its audio jitter buffer)
      // and closes the gap by delaying the video ~10 ms a second. An answer in the first seconds is heard
      // up to ~150 ms late; judged here is the steady state, as a viewer has it once they have spoken.
      await page.waitForTimeout(SETTLE_MS);
      await page.keyboard.type("Please say something");
      await page.keyboard.press("Enter");
      await embedInState(page, "speaking");
      await page.waitForTimeout(1500);
      await page.screenshot({ path: path.join(SHOTS, `speaking-${codec}.png`) });
      await embedInState(page, "live", 30_000);
      await page.waitForTimeout(1500);
      const s = await samplesOf(page);
      writeFileSync(path.join(SHOTS, `samples-${codec}.json`), JSON.stringify(s));
      await page.getByRole("button", { name: "End", exact: true }).click();
      await page.close();

      const report = measure(s);
      writeFileSync(path.join(SHOTS, `report-${codec}.json`), JSON.stringify(report, null, 1));
      console.info(
        `media in the browser (${codec}):`,
        JSON.stringify({ ...report, pairs: undefined, serverStalls: await server.ask({ op: "stalls" }) }),
      );

      // Every frame's mouth was read.
      expect(s.probeErrors).toEqual([]);
      // Frames decoded at 25 fps on average (>= 24), no freeze.
      expect(report.fps).toBeGreaterThanOrEqual(24);
      expect(report.freezes).toBe(0);
      // The voice was heard; the mouth moved with it and rested without it.
      expect(report.voiceLevel).toBeGreaterThan(0.02);
      expect(report.speakingFrames).toBeGreaterThan(25);
      expect(report.silentFrames).toBeGreaterThan(25);
      expect(report.talkingMouth).toBeGreaterThan(report.restMouth + 1);
      expect(report.talkingMotion).toBeGreaterThan(5 * report.restMotion + 0.5);
      // The mouth follows the voice (clearly correlated) within the sync window: the voice at most 45 ms
      // ahead of the picture, at most 125 ms behind.
      expect(report.correlation).toBeGreaterThan(0.3);
      expect(report.audioBehindMouthMs).toBeGreaterThanOrEqual(-45);
      expect(report.audioBehindMouthMs).toBeLessThanOrEqual(125);
    });
  }

  it("goes on playing after the encoder's ffmpeg is killed (as the OOM killer would)", async () => {
    const created = await server.request("POST", "/v2/embeddings", {
      avatar_id: ADA,
      is_sandbox: true,
      video_settings: { encoding: "H264" },
    });
    const embed = (await json(created)).data;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(embed.url);
    await startConversation(page, false);
    await startProbes(page, { x: 0, y: 0, width: 8, height: 8 });
    await page.waitForTimeout(2000);
    const before = (await samplesOf(page)).stats.at(-1);
    const killed = await server.ask({ op: "killEncoders" });
    expect(killed.length).toBeGreaterThan(0);
    // The frames the killed encoders held are lost; a fresh one goes on from a keyframe at once. (Left
    // to the viewer's keyframe request after a freeze, the picture stood still for ~4 s.)
    await page.waitForTimeout(4000);
    const after = (await samplesOf(page)).stats.at(-1);
    const replaced = (await server.ask({ op: "encoders" })).some((pid) => !killed.includes(pid));
    await page.getByRole("button", { name: "End", exact: true }).click();
    await page.close();
    if (!before || !after) throw new Error("no video stats from the page");
    const fps = (after.framesDecoded - before.framesDecoded) / ((after.at - before.at) / 1000);
    const frozenSeconds = after.totalFreezesDuration - before.totalFreezesDuration;
    console.info(
      "media in the browser after the encoder was killed:",
      JSON.stringify({ fps, frozenSeconds, ...after }),
    );
    expect(replaced).toBe(true);
    expect(frozenSeconds).toBeLessThan(1);
    expect(fps).toBeGreaterThanOrEqual(18);
  });
});
