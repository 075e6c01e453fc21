import type { AvatarLook } from "@avatar/contracts/catalog";
import type { MediaClock } from "../clock.js";
import {
  type AvFrame,
  FRAME_MS,
  type Orientation,
  SAMPLES_PER_FRAME,
  type VideoFrameI420,
  type VideoQualityName,
  videoSize,
} from "../frames.js";
import type { EyeState, Viseme } from "../look/visemes.js";
import type { AvatarVideoGenerator, PhonemeMark } from "../video-generator.js";
import { AudioQueue } from "./audio-queue.js";
import { blitSprite } from "./i420.js";
import { IdleMotion, type Pose } from "./idle-motion.js";
import { MouthEstimator, type MouthTarget } from "./mouth-estimator.js";
import { HEAD_TILTS_DEG, type LookRaster, type MouthSprites } from "./raster.js";
import { keyOfLook, type RasterCache, sharedRasterCache } from "./raster-cache.js";
import { Upsampler2x } from "./upsample.js";

/**
 * The CPU renderer: a 2D animated portrait of an avatar's look. Audio pushed at 24 kHz plays in order;
 * every frame carries its 40 ms of that voice at 48 kHz and a mouth drawn from the same 40 ms, so voice
 * and mouth leave here in sync. A frame costs one copy of a precomputed base image and three sprite
 * blits (head, eyes when blinking, mouth); the rasters are shared across renderers through a RasterCache.
 */

export interface PortraitRendererOptions extends RendererSettings {
  look: AvatarLook;
  /** The catalog's look_key when known (saves hashing the look). */
  lookKey?: string;
  quality: VideoQualityName;
  orientation?: Orientation;
  cache?: RasterCache;
}

/** How a renderer of a rasterized look animates and paces it. */
export interface RendererSettings {
  clock: MediaClock;
  /** Told how long each frame took to draw and of each frame skipped (metrics). */
  observer?: RendererObserver;
  /** Seeds the idle motion (blinks, sway); default (with `create`): the look key. */
  seed?: string;
  /**
   * Video buffers in rotation (default 4): a frame's `video.data` is overwritten that many frames later,
   * so a consumer encodes (or copies) each frame before pulling that many more. Allocating 1.4 MB a frame
   * instead would cost more than drawing it.
   */
  framePool?: number;
}

export interface RendererObserver {
  rendered(ms: number): void;
  skipped(): void;
}

export interface RendererStats {
  framesRendered: number;
  /** Frames skipped because the consumer fell behind real time (their audio is dropped with them). */
  framesSkipped: number;
}

/** Source rate of pushed audio (the session rate). */
const INPUT_RATE = 24_000;
const INPUT_PER_FRAME = SAMPLES_PER_FRAME / 2;

export class PortraitRenderer implements AvatarVideoGenerator {
  readonly width: number;
  readonly height: number;
  private readonly raster: LookRaster;
  private readonly clock: MediaClock;
  private readonly observer: RendererObserver | undefined;
  private readonly queue = new AudioQueue(INPUT_RATE);
  private readonly mouth = new MouthEstimator(INPUT_RATE);
  private readonly motion: IdleMotion;
  private readonly upsampler = new Upsampler2x();
  private readonly input = new Int16Array(INPUT_PER_FRAME);
  private readonly unit: number;
  /** Timeline positions where flushed utterances end. */
  private utteranceEnds: number[] = [];
  private voice = 0;
  private index = 0;
  private streaming = false;
  private closed = false;
  private readonly closedSignal = new AbortController();
  private readonly counts: RendererStats = { framesRendered: 0, framesSkipped: 0 };
  private readonly pool: Uint8Array[];
  private poolNext = 0;

  /**
   * A renderer of the look at the quality's frame size, once the look is rasterized for it (in a worker
   * thread, once per look and size: see RasterCache). Rejects with LookError for a look it cannot draw.
   */
  static async create(options: PortraitRendererOptions): Promise<PortraitRenderer> {
    const size = videoSize(options.quality, options.orientation ?? "horizontal");
    const lookKey = options.lookKey ?? keyOfLook(options.look);
    const raster = await (options.cache ?? sharedRasterCache).get(
      options.look,
      size.width,
      size.height,
      lookKey,
    );
    return new PortraitRenderer(raster, { ...options, seed: options.seed ?? lookKey });
  }

  /** A renderer of an already rasterized look (frames of the raster's size). */
  constructor(raster: LookRaster, settings: RendererSettings) {
    this.raster = raster;
    this.width = raster.width;
    this.height = raster.height;
    this.clock = settings.clock;
    this.observer = settings.observer;
    this.motion = new IdleMotion(settings.seed ?? "");
    this.unit = Math.min(raster.width, raster.height) / 720;
    const frameBytes = (raster.bases[0] as { data: Uint8Array }).data.length;
    this.pool = Array.from(
      { length: Math.max(1, settings.framePool ?? 4) },
      () => new Uint8Array(frameBytes),
    );
  }

  pushAudio(pcm: Int16Array, timing?: { phonemes?: PhonemeMark[] }): void {
    if (!this.closed) this.queue.push(pcm, timing?.phonemes);
  }

  flush(): void {
    if (!this.closed) this.utteranceEnds.push(this.queue.position + this.queue.queuedSamples);
  }

  clearBuffer(): void {
    this.queue.clear();
    this.utteranceEnds = [];
    this.upsampler.reset();
    this.mouth.rest();
    this.voice = 0;
  }

  stats(): RendererStats {
    return { ...this.counts };
  }

  close(): void {
    this.closed = true;
    this.closedSignal.abort();
  }

  /** Frames paced by the clock from now on; one consumer at a time. */
  async *frames(signal?: AbortSignal): AsyncGenerator<AvFrame> {
    if (this.streaming) throw new Error("this renderer already has a frame consumer");
    this.streaming = true;
    const stop = signal ? AbortSignal.any([signal, this.closedSignal.signal]) : this.closedSignal.signal;
    try {
      const start = this.clock.now();
      let due = 0;
      while (!stop.aborted) {
        const at = start + due * FRAME_MS;
        const now = this.clock.now();
        if (now < at) {
          await this.clock.sleep(at - now, stop);
          if (stop.aborted) break;
        } else {
          // Behind by a frame or more: skip to the frame due now rather than drift.
          const behind = Math.floor((now - at) / FRAME_MS);
          for (let k = 0; k < behind; k++) this.skipFrame();
          due += behind;
        }
        yield this.renderFrame(start + due * FRAME_MS);
        due++;
      }
    } finally {
      this.streaming = false;
    }
  }

  /** The next frame now, without pacing (frames() paces it; tests and benchmarks call it directly). */
  renderFrame(at: number): AvFrame {
    const began = performance.now();
    const from = this.queue.position;
    const voiced = this.queue.take(this.input);
    const marked = voiced > 0 ? this.queue.markedViseme(from, from + INPUT_PER_FRAME) : undefined;
    const target = this.mouth.next(this.input, voiced, marked);
    const audio = new Int16Array(SAMPLES_PER_FRAME);
    this.upsampler.process(this.input, audio);
    const utteranceEnd = this.passedUtteranceEnd(from + INPUT_PER_FRAME);
    const index = this.index++;
    const mouth = this.mouthSprite(target);
    const data = this.compose(index, target.openness, mouth);
    this.counts.framesRendered++;
    const frame: AvFrame = {
      index,
      at,
      video: { width: this.width, height: this.height, data },
      audio,
      mouthOpen: mouth.openness,
      speaking: voiced > 0,
    };
    if (utteranceEnd) frame.utteranceEnd = true;
    this.observer?.rendered(performance.now() - began);
    return frame;
  }

  /**
   * A still with the head at rest and the given mouth and eyes (posters, screenshots); touches no state.
   * The mouth is the viseme's shape nearest `openness`.
   */
  still(viseme: Viseme, openness: number, eyes: EyeState): VideoFrameI420 {
    const mouth = this.mouthSprite({ viseme, openness });
    const data = new Uint8Array(this.pool[0]?.length ?? 0);
    this.composePose({ headX: 0, headY: 0, tilt: 0, breath: 0, eyes }, mouth, data);
    return { width: this.width, height: this.height, data };
  }

  /**
   * Where the mouth is drawn in the frame with the head at rest: the box around every mouth shape.
   * Idle motion moves it a few pixels (up to 4 at 720p). For tests that watch the mouth in a video.
   */
  mouthBox(): { x: number; y: number; width: number; height: number } {
    const r = this.raster;
    const upright = HEAD_TILTS_DEG.indexOf(0);
    const boxes = r.mouths.map((m) => m.byTilt[upright] as (typeof m.byTilt)[number]);
    const left = Math.min(...boxes.map((b) => b.dx));
    const top = Math.min(...boxes.map((b) => b.dy));
    const right = Math.max(...boxes.map((b) => b.dx + b.sprite.width));
    const bottom = Math.max(...boxes.map((b) => b.dy + b.sprite.height));
    return { x: r.headX + left, y: r.headY + top, width: right - left, height: bottom - top };
  }

  /** A frame's worth of time passes unseen: its audio is dropped and the animation moves on. */
  private skipFrame(): void {
    const from = this.queue.position;
    const voiced = this.queue.take(this.input);
    this.mouth.next(this.input, voiced, undefined);
    this.upsampler.reset();
    this.passedUtteranceEnd(from + INPUT_PER_FRAME);
    this.motion.pose(this.index++, this.voice);
    this.counts.framesSkipped++;
    this.observer?.skipped();
  }

  private passedUtteranceEnd(until: number): boolean {
    let passed = false;
    while (this.utteranceEnds.length > 0 && (this.utteranceEnds[0] as number) <= until) {
      this.utteranceEnds.shift();
      passed = true;
    }
    return passed;
  }

  private mouthSprite(target: MouthTarget): MouthSprites {
    let best: MouthSprites | undefined;
    for (const m of this.raster.mouths) {
      if (m.viseme !== target.viseme) continue;
      if (!best || Math.abs(m.openness - target.openness) < Math.abs(best.openness - target.openness))
        best = m;
    }
    return best ?? (this.raster.mouths.find((m) => m.viseme === "rest") as MouthSprites);
  }

  private compose(index: number, openness: number, mouth: MouthSprites): Uint8Array {
    this.voice += (openness - this.voice) * 0.3;
    const data = this.pool[this.poolNext] as Uint8Array;
    this.poolNext = (this.poolNext + 1) % this.pool.length;
    this.composePose(this.motion.pose(index, this.voice), mouth, data);
    return data;
  }

  private composePose(pose: Pose, mouth: MouthSprites, data: Uint8Array): void {
    const r = this.raster;
    const lift = Math.round(pose.breath * (r.bases.length - 1));
    const tilt = nearestTilt(pose.tilt);
    data.set((r.bases[lift] as { data: Uint8Array }).data);
    const frame = { width: this.width, height: this.height, data };
    const x = r.headX + Math.round(pose.headX * this.unit);
    const y = r.headY + Math.round(pose.headY * this.unit) - lift;
    blitSprite(frame, r.heads[tilt] as (typeof r.heads)[number], x, y);
    if (pose.eyes !== "open") {
      const eyes = r.eyes[pose.eyes][tilt] as (typeof r.eyes.open)[number];
      blitSprite(frame, eyes.sprite, x + eyes.dx, y + eyes.dy);
    }
    const m = mouth.byTilt[tilt] as (typeof mouth.byTilt)[number];
    blitSprite(frame, m.sprite, x + m.dx, y + m.dy);
  }
}

function nearestTilt(deg: number): number {
  let best = 0;
  for (let i = 1; i < HEAD_TILTS_DEG.length; i++) {
    if (Math.abs((HEAD_TILTS_DEG[i] as number) - deg) < Math.abs((HEAD_TILTS_DEG[best] as number) - deg))
      best = i;
  }
  return best;
}
