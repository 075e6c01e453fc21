import { describe, expect, it } from "vitest";
import { VirtualClock } from "../src/clock.js";
import { i420Size, type Orientation, SAMPLES_PER_FRAME, type VideoQualityName } from "../src/frames.js";
import { IdleMotion } from "../src/render/idle-motion.js";
import { PortraitRenderer } from "../src/render/portrait-renderer.js";
import { RasterCache } from "../src/render/raster-cache.js";
import { bursts, digest, testLook } from "./support.js";

const cache = new RasterCache();
const renderer = (options: { quality?: VideoQualityName; orientation?: Orientation; seed?: string } = {}) =>
  PortraitRenderer.create({
    look: testLook(),
    quality: options.quality ?? "low",
    orientation: options.orientation,
    clock: new VirtualClock(),
    seed: options.seed ?? "s",
    cache,
  });

describe("PortraitRenderer", () => {
  it("gives the same frames for the same look, seed and audio", async () => {
    const audio = bursts(40, (f) => f % 10 < 6);
    const runs = (await Promise.all([renderer(), renderer()])).map((r) => {
      r.pushAudio(audio);
      return Array.from({ length: 60 }, (_, i) => {
        const f = r.renderFrame(i * 40);
        return `${digest(f.video.data)}:${digest(f.audio)}:${f.mouthOpen}`;
      });
    });
    expect(runs[0]).toEqual(runs[1]);
    expect(new Set(runs[0]).size).toBeGreaterThan(30);
  });

  it("opens the mouth with speech-like bursts and rests it in the silences", async () => {
    const on = (f: number) => f % 10 < 5;
    const r = await renderer();
    r.pushAudio(bursts(60, on));
    const frames = Array.from({ length: 60 }, (_, i) => r.renderFrame(i * 40));
    for (const [i, f] of frames.entries()) {
      expect(f.speaking).toBe(true);
      if (on(i)) expect(f.mouthOpen, `frame ${i}`).toBeGreaterThan(0.2);
      else expect(f.mouthOpen, `frame ${i}`).toBe(0);
    }
    const after = r.renderFrame(60 * 40);
    expect(after.speaking).toBe(false);
    expect(after.mouthOpen).toBe(0);
  });

  it("opens wider for louder speech", async () => {
    const r = await renderer();
    r.pushAudio(bursts(10, () => true, 0.5));
    r.pushAudio(bursts(10, () => true, 0.02));
    const frames = Array.from({ length: 20 }, (_, i) => r.renderFrame(i * 40));
    const loud = frames.slice(2, 10).map((f) => f.mouthOpen);
    const quiet = frames.slice(14, 20).map((f) => f.mouthOpen);
    expect(Math.min(...loud)).toBeGreaterThan(Math.max(...quiet));
  });

  it("carries each frame's 40 ms of voice at 48 kHz, in the order pushed", async () => {
    const r = await renderer();
    const tone = new Int16Array(960 * 3).map((_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)),
    );
    r.pushAudio(tone.subarray(0, 1500));
    r.pushAudio(tone.subarray(1500));
    const audio = Array.from({ length: 4 }, (_, i) => r.renderFrame(i * 40).audio);
    for (const a of audio) expect(a.length).toBe(SAMPLES_PER_FRAME);
    const joined = new Int16Array(audio.flatMap((a) => [...a]));
    // Every second output sample is an input sample (8 samples of filter delay).
    for (let i = 8; i < 960 * 3; i += 97) expect(joined[2 * i + 16]).toBe(tone[i]);
    expect(audio[3]?.subarray(32).every((s) => s === 0)).toBe(true);
  });

  it("falls silent with the mouth at rest from the frame after an interrupt", async () => {
    const r = await renderer();
    r.pushAudio(bursts(100, () => true));
    for (let i = 0; i < 5; i++) expect(r.renderFrame(i * 40).mouthOpen).toBeGreaterThan(0);
    r.clearBuffer();
    const next = r.renderFrame(5 * 40);
    expect(next.speaking).toBe(false);
    expect(next.mouthOpen).toBe(0);
    expect(next.audio.every((s) => s === 0)).toBe(true);
  });

  it("follows phoneme marks for the shape: lips closed on an m however loud the audio", async () => {
    const r = await renderer();
    r.pushAudio(
      bursts(10, () => true, 0.5),
      { phonemes: [{ phoneme: "m", startMs: 0, durationMs: 400 }] },
    );
    const frames = Array.from({ length: 10 }, (_, i) => r.renderFrame(i * 40));
    expect(frames.every((f) => f.speaking && f.mouthOpen === 0)).toBe(true);
    const open = await renderer();
    open.pushAudio(
      bursts(10, () => true, 0.5),
      { phonemes: [{ phoneme: "ˈa", startMs: 0, durationMs: 400 }] },
    );
    expect(open.renderFrame(0).mouthOpen).toBeGreaterThan(0.5);
  });

  it("stays alive while idle: the picture moves, the mouth rests, the eyes blink", async () => {
    const r = await renderer();
    const frames = Array.from({ length: 150 }, (_, i) => {
      const f = r.renderFrame(i * 40);
      return { digest: digest(f.video.data), mouth: f.mouthOpen, speaking: f.speaking };
    });
    expect(frames.every((f) => f.mouth === 0 && !f.speaking)).toBe(true);
    expect(new Set(frames.map((f) => f.digest)).size).toBeGreaterThan(10);
    const motion = new IdleMotion("s");
    const poses = Array.from({ length: 250 }, (_, i) => motion.pose(i, 0));
    expect(poses.filter((p) => p.eyes === "closed").length).toBeGreaterThan(0);
    expect(poses.filter((p) => p.eyes === "open").length).toBeGreaterThan(200);
    expect(new Set(poses.map((p) => Math.round(p.headX))).size).toBeGreaterThan(3);
  });

  it("marks the frame in which a flushed utterance ends", async () => {
    const r = await renderer();
    r.pushAudio(bursts(3, () => true).subarray(0, 960 * 2 + 100));
    r.flush();
    const frames = Array.from({ length: 5 }, (_, i) => r.renderFrame(i * 40));
    expect(frames.map((f) => f.utteranceEnd === true)).toEqual([false, false, true, false, false]);
  });

  it.each([
    ["very_high", 1920, 1080],
    ["high", 1280, 720],
    ["medium", 854, 480],
    ["low", 640, 360],
  ] as const)("renders %s at %ix%i, and turned for vertical", async (quality, width, height) => {
    for (const [orientation, w, h] of [
      ["horizontal", width, height],
      ["vertical", height, width],
    ] as const) {
      const f = (await renderer({ quality, orientation })).renderFrame(0);
      expect([f.video.width, f.video.height]).toEqual([w, h]);
      expect(f.video.data.length).toBe(i420Size(w, h));
    }
  });
});

describe("pacing", () => {
  it("stamps frames 40 ms apart on the injected clock, and skips (and counts) frames when the consumer falls behind", async () => {
    const clock = new VirtualClock(1_000_000);
    const r = await PortraitRenderer.create({ look: testLook(), quality: "low", clock, cache, seed: "s" });
    r.pushAudio(bursts(50, () => true));
    const seen: { index: number; at: number }[] = [];
    for await (const f of r.frames()) {
      seen.push({ index: f.index, at: f.at });
      if (seen.length === 3) clock.advance(200); // the consumer stalls for 200 ms
      if (seen.length === 6) break;
    }
    expect(seen.slice(0, 3).map((s) => s.at)).toEqual([1_000_000, 1_000_040, 1_000_080]);
    // After the stall the frame due now comes next, on the same 40 ms grid.
    expect(seen[3]?.at).toBe(1_000_280);
    expect(r.stats().framesSkipped).toBe(4);
    expect(seen.every((s) => (s.at - 1_000_000) % 40 === 0)).toBe(true);
  });

  it("ends the stream when the signal aborts or the renderer closes", async () => {
    const r = await renderer();
    const controller = new AbortController();
    let n = 0;
    for await (const _ of r.frames(controller.signal)) if (++n === 3) controller.abort();
    expect(n).toBe(3);
    let m = 0;
    for await (const _ of r.frames()) if (++m === 2) r.close();
    expect(m).toBe(2);
  });
});
