import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { syntheticFrame, syntheticFrames } from "../src/bench/synthetic-frames.js";
import { itemAt } from "../src/checked.js";
import {
  ENCODER_PRIORITY_BOOST,
  EncoderProcess,
  liveEncoderPids,
  liveEncoderProcesses,
} from "../src/encode/encoder-process.js";
import { ffmpegBinary } from "../src/encode/ffmpeg-binary.js";
import { OpusEncoder } from "../src/encode/opus-encoder.js";
import { VideoEncoder, type VideoEncoderOptions } from "../src/encode/video-encoder.js";
import type { EncodedVideoFrame } from "../src/encode/video-encoding.js";
import { type AvFrame, videoSize } from "../src/frames.js";
import { encodeSynthetic, warmed } from "./encoded-frames.js";
import { decodeWithFfmpeg } from "./ffmpeg-decode.js";
import { until } from "./support.js";

const dir = await mkdtemp(join(tmpdir(), "media-encoder-"));

/** A minimal IVF file around VP8 frames, so ffmpeg can decode them. */
function ivf(frames: EncodedVideoFrame[], width: number, height: number): Buffer {
  const header = Buffer.alloc(32);
  header.write("DKIF", 0, "latin1");
  header.writeUInt16LE(32, 6);
  header.write("VP80", 8, "latin1");
  header.writeUInt16LE(width, 12);
  header.writeUInt16LE(height, 14);
  header.writeUInt32LE(25, 16);
  header.writeUInt32LE(1, 20);
  header.writeUInt32LE(frames.length, 24);
  const parts = [header];
  for (const f of frames) {
    const h = Buffer.alloc(12);
    h.writeUInt32LE(f.data.length, 0);
    h.writeBigUInt64LE(BigInt(f.index), 4);
    parts.push(h, Buffer.from(f.data));
  }
  return Buffer.concat(parts);
}

afterAll(() => expect(liveEncoderProcesses()).toBe(0));

/** The mean luma of each frame of a video file. */
function decodeLuma(file: string, width: number, height: number): number[] {
  const args = ["-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"];
  const raw = spawnSync(ffmpegBinary(), args, { maxBuffer: 1 << 28 }).stdout;
  const luma = width * height;
  const frame = luma * 1.5;
  return Array.from({ length: Math.floor(raw.length / frame) }, (_, k) => {
    let sum = 0;
    for (let i = k * frame; i < k * frame + luma; i++) sum += raw[i] as number;
    return sum / luma;
  });
}

describe("video encoder", () => {
  it("H264: one access unit per frame, in order, decodable to the right number and size of frames", async () => {
    const { frames: out, width, height } = await encodeSynthetic("H264", 30);
    expect(out.map((f) => f.index)).toEqual([...Array(30).keys()]);
    const first = itemAt(out, 0);
    expect(first.keyframe).toBe(true);
    const file = join(dir, "out.h264");
    writeFileSync(file, Buffer.concat(out.map((f) => f.data)));
    const decoded = decodeWithFfmpeg(file);
    expect(decoded).toMatchObject({ width, height, videoFrames: 30 });
    // Constrained baseline: profile_idc 66 with constraint_set1.
    const sps = first.data.subarray(4);
    expect(itemAt(sps, 0) & 0x1f).toBe(7);
    expect(sps[1]).toBe(0x42);
    expect(itemAt(sps, 2) & 0x40).toBe(0x40);
  });

  it.each(["H264", "VP8"] as const)(
    "%s: a process is set up by a warm-up frame before any frame is written; the first real one is a keyframe",
    async (codec) => {
      const { width, height } = videoSize("low");
      const out: { index: number; keyframe: boolean }[] = [];
      const process = new EncoderProcess(
        ffmpegBinary(),
        { codec, width, height },
        (o) => out.push({ index: o.index, keyframe: o.keyframe }),
        (error) => {
          throw error;
        },
      );
      try {
        // Its warm-up frame came out (the encoder is set up) and was not given to the caller.
        await until(() => process.started);
        expect(out).toEqual([]);
        for (let i = 0; i < 3; i++) process.write(10 + i, syntheticFrame(i, { width, height }, 0).video.data);
        await until(() => out.length === 3);
        expect(out).toEqual([
          { index: 10, keyframe: true },
          { index: 11, keyframe: false },
          { index: 12, keyframe: false },
        ]);
      } finally {
        await process.close();
      }
    },
  );

  it("runs its ffmpeg above this process's priority where it may raise one (root), at its own where not", () => {
    // In a process of its own, so that the privilege can be taken away (setpriv) for the second case.
    const module = (file: string) => JSON.stringify(new URL(file, import.meta.url).href);
    const script = `import { getPriority } from "node:os";
      import { EncoderProcess } from ${module("../src/encode/encoder-process.ts")};
      import { ffmpegBinary } from ${module("../src/encode/ffmpeg-binary.ts")};
      import { i420Size, videoSize } from ${module("../src/frames.ts")};
      const { width, height } = videoSize("low");
      let p;
      const out = await new Promise((resolve, reject) => {
        p = new EncoderProcess(ffmpegBinary(), { codec: "H264", width, height },
          (o) => resolve({ own: getPriority(), encoder: getPriority(p.pid), index: o.index }), reject);
        p.write(7, new Uint8Array(i420Size(width, height)).fill(90));
      });
      await p.close();
      console.log(JSON.stringify(out));`;
    const run = (...prefix: string[]) => {
      const args = [process.execPath, "--import", "tsx", "--input-type=module", "-e", script];
      const [command, ...rest] = [...prefix, ...args] as [string, ...string[]];
      const result = spawnSync(command, rest, { encoding: "utf8", timeout: 30_000 });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { own: number; encoder: number; index: number };
    };
    const root = process.getuid?.() === 0;
    const own = getPriority();
    expect(run()).toEqual({
      own,
      encoder: root ? Math.max(-20, own - ENCODER_PRIORITY_BOOST) : own,
      index: 7,
    });
    if (root) {
      const unprivileged = ["setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"];
      expect(run(...unprivileged)).toEqual({ own, encoder: own, index: 7 });
    }
  });

  it("VP8: one frame per frame, decodable to the right number and size of frames", async () => {
    const { frames: out, width, height } = await encodeSynthetic("VP8", 30);
    expect(out.map((f) => f.index)).toEqual([...Array(30).keys()]);
    const file = join(dir, "out.ivf");
    writeFileSync(file, ivf(out, width, height));
    expect(decodeWithFfmpeg(file)).toMatchObject({ width, height, videoFrames: 30 });
  });

  it.each(["H264", "VP8"] as const)(
    "%s: a keyframe request makes the next frame a keyframe, nothing skipped",
    async (codec) => {
      const { frames: out, stats } = await encodeSynthetic(codec, 30, [15]);
      expect(stats.handovers).toBe(1);
      expect(out.map((f) => f.index)).toEqual([...Array(30).keys()]);
      expect(out.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 15]);
      const file = join(dir, `handover.${codec}`);
      writeFileSync(file, codec === "H264" ? Buffer.concat(out.map((f) => f.data)) : ivf(out, 640, 360));
      expect(decodeWithFfmpeg(file).videoFrames).toBe(30);
    },
  );

  /**
   * An H264 encoder with room for every frame, set up (by default its spare started as soon as its first
   * frame is out), what it gives out, the encoder processes started for it, and 30 frames to give it.
   */
  async function h264Encoder(options: Partial<VideoEncoderOptions> = {}) {
    const { width, height } = videoSize("low");
    const out: EncodedVideoFrame[] = [];
    const before = liveEncoderPids();
    const encoder = new VideoEncoder({
      encoding: { codec: "H264", width, height },
      onFrame: (f) => out.push(f),
      maxInFlight: 100,
      keepSpare: "always",
      spareDelayMs: 0,
      ...options,
    });
    const started = () => liveEncoderPids().filter((pid) => !before.includes(pid));
    const frames: AvFrame[] = [];
    for await (const frame of syntheticFrames({ width, height, count: 30 })) frames.push(frame);
    return { encoder: await warmed(encoder), out, frames, started };
  }

  /** How many frames ffmpeg decodes from H264 access units written one after another. */
  function decodedH264(out: EncodedVideoFrame[], name: string): number {
    const file = join(dir, `${name}.h264`);
    writeFileSync(file, Buffer.concat(out.map((f) => f.data)));
    return decodeWithFfmpeg(file).videoFrames;
  }

  /**
   * An H264 encoder that has given out frame 0 (30 synthetic frames, the rest still to encode), whose
   * spare has started, with its own process stopped (SIGSTOP): a loaded machine, where it falls behind.
   */
  async function encoderFallingBehind(handoverTimeoutMs?: number) {
    const { encoder, out, frames, started } = await h264Encoder(
      handoverTimeoutMs ? { handoverTimeoutMs } : {},
    );
    encoder.encode(itemAt(frames, 0));
    await until(() => out.length === 1 && started().length === 2);
    // The first one started is the active one; the second, its spare, becomes the incoming one.
    const old = itemAt(started(), 0);
    process.kill(old, "SIGSTOP");
    return { encoder, out, frames, old };
  }

  it("keeps no spare until a keyframe is asked for, then one, a while after the handover", async () => {
    const { encoder, out, frames, started } = await h264Encoder({
      keepSpare: "once-asked",
      spareDelayMs: 400,
    });
    encoder.encode(itemAt(frames, 0));
    await until(() => out.length === 1);
    await new Promise((r) => setTimeout(r, 600)); // longer than the spare's delay
    const first = started();
    expect(first).toHaveLength(1);

    encoder.requestKeyframe();
    for (const frame of frames.slice(1, 10)) encoder.encode(frame);
    await until(() => encoder.stats.handovers === 1 && !liveEncoderPids().includes(itemAt(first, 0)));
    const at = performance.now();
    expect(started()).toHaveLength(1); // the fresh one that took over, no spare yet
    await until(() => started().length === 2);
    expect(performance.now() - at).toBeGreaterThan(250);
    await encoder.close();
    expect(out.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 1]);
  });

  it("a handover's keyframe that overtakes frames still in the old encoder waits for them", async () => {
    // A long handover timeout: however slow the machine, the old encoder's frames are waited for.
    const { encoder, out, frames, old } = await encoderFallingBehind(10_000);
    for (const frame of frames) {
      if (frame.index === 15) encoder.requestKeyframe();
      if (frame.index > 0) encoder.encode(frame);
    }
    await new Promise((r) => setTimeout(r, 400)); // the fresh encoder's keyframe is out by now
    expect(out.map((f) => f.index)).toEqual([0]);
    process.kill(old, "SIGCONT");
    await until(() => out.length === 30);
    await encoder.close();
    expect(out.map((f) => f.index)).toEqual([...Array(30).keys()]);
    expect(out.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 15]);
    expect(encoder.stats.handovers).toBe(1);
    expect(decodedH264(out, "overtaken")).toBe(30);
  });

  it("a handover whose old encoder is stuck goes ahead without its frames when the timeout passes", async () => {
    const { encoder, out, frames } = await encoderFallingBehind(600);
    for (const frame of frames) {
      if (frame.index === 15) encoder.requestKeyframe();
      if (frame.index > 0) encoder.encode(frame);
    }
    await until(() => out.length === 16);
    await encoder.close(); // kills the stopped process after its grace
    expect(out.map((f) => f.index)).toEqual([0, ...[...Array(15).keys()].map((k) => k + 15)]);
    expect(itemAt(out, 1).keyframe).toBe(true);
  });

  it("a handover whose old encoder dies goes on with the fresh one at once, not at the timeout", async () => {
    // A timeout longer than until's: the only way on is the old encoder's death.
    const { encoder, out, frames, old } = await encoderFallingBehind(60_000);
    for (const frame of frames) {
      if (frame.index === 15) encoder.requestKeyframe();
      if (frame.index > 0) encoder.encode(frame);
    }
    await new Promise((r) => setTimeout(r, 400)); // the fresh encoder's frames are out and held by now
    expect(out.map((f) => f.index)).toEqual([0]);
    process.kill(old, "SIGKILL");
    await until(() => out.length === 16);
    await encoder.close();
    expect(out.map((f) => f.index)).toEqual([0, ...[...Array(15).keys()].map((k) => k + 15)]);
    expect(itemAt(out, 1).keyframe).toBe(true);
    expect(encoder.stats.handovers).toBe(1);
    expect(decodedH264(out, "old-died")).toBe(16);
  });

  it("an encoder killed by a signal is replaced: the picture goes on from a keyframe", async () => {
    const { encoder, out, frames, started } = await h264Encoder();
    for (const frame of frames.slice(0, 10)) encoder.encode(frame);
    await until(() => out.length === 10);
    const active = itemAt(started(), 0);
    process.kill(active, "SIGKILL"); // as the OOM killer would
    await until(() => !liveEncoderPids().includes(active));
    // The next frame goes to a fresh encoder once it is set up (its spare, here, started before).
    await until(() => encoder.ready);
    for (const frame of frames.slice(10)) encoder.encode(frame);
    await until(() => out.length === 30);
    await encoder.close();
    expect(out.map((f) => f.index)).toEqual([...Array(30).keys()]);
    expect(out.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 10]);
    expect(decodedH264(out, "killed")).toBe(30);
  });

  it("gives a fresh encoder no frames until it is set up, then starts from the newest, a keyframe", async () => {
    const { width, height } = videoSize("low");
    const out: EncodedVideoFrame[] = [];
    const encoder = new VideoEncoder({
      encoding: { codec: "H264", width, height },
      onFrame: (f) => out.push(f),
      maxInFlight: 100,
    });
    const frames: AvFrame[] = [];
    for await (const frame of syntheticFrames({ width, height, count: 8 })) frames.push(frame);
    // Before its set-up is done, frames are not taken (and counted as dropped), not queued to go stale.
    expect(encoder.encode(itemAt(frames, 0))).toBe(false);
    expect(encoder.encode(itemAt(frames, 1))).toBe(false);
    await until(() => encoder.ready);
    for (const frame of frames.slice(2)) expect(encoder.encode(frame)).toBe(true);
    await until(() => out.length === 6);
    await encoder.close();
    expect(out.map((f) => f.index)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(out.map((f) => f.keyframe)).toEqual([true, false, false, false, false, false]);
    expect(encoder.stats.dropped).toBe(2);
  });

  it("a handover's fresh encoder encodes what it was given while starting, though the caller reuses the buffer", async () => {
    const { width, height } = videoSize("low");
    const out: EncodedVideoFrame[] = [];
    const encoder = await warmed(
      new VideoEncoder({ encoding: { codec: "H264", width, height }, onFrame: (f) => out.push(f) }),
    );
    // Grey frames of six levels, all drawn into one buffer; from the second on, while the encoder
    // taking over (started by the request: no spare yet) has not answered once.
    const levels = [40, 80, 120, 160, 200, 240];
    const shared = new Uint8Array(width * height * 1.5);
    const frame = (index: number) => {
      shared.fill(itemAt(levels, index), 0, width * height).fill(128, width * height);
      return {
        ...syntheticFrame(index, { width, height }, index * 40),
        video: { width, height, data: shared },
      };
    };
    expect(encoder.encode(frame(0))).toBe(true);
    await until(() => out.length === 1);
    encoder.requestKeyframe();
    for (let index = 1; index < levels.length; index++) expect(encoder.encode(frame(index))).toBe(true);
    await until(() => out.length === levels.length);
    await encoder.close();
    expect(encoder.stats.handovers).toBe(1);
    expect(out.filter((f) => f.keyframe).map((f) => f.index)).toEqual([0, 1]);
    const file = join(dir, "reused.h264");
    writeFileSync(file, Buffer.concat(out.map((f) => f.data)));
    const decoded = decodeLuma(file, width, height);
    expect(decoded.map((mean) => Math.round(mean / 10) * 10)).toEqual(levels);
  });

  it("drops frames (and counts them) instead of queueing when the encoder is behind", async () => {
    const { width, height } = videoSize("low");
    const encoder = new VideoEncoder({
      encoding: { codec: "H264", width, height },
      onFrame: () => {},
      maxInFlight: 2,
    });
    let accepted = 0;
    for await (const frame of syntheticFrames({ width, height, count: 40 }))
      if (encoder.encode(frame)) accepted++;
    expect(encoder.stats.dropped).toBe(40 - accepted);
    expect(encoder.stats.dropped).toBeGreaterThan(0);
    await encoder.close();
  });

  it("refuses a frame of the wrong size", async () => {
    const encoder = new VideoEncoder({
      encoding: { codec: "H264", width: 640, height: 360 },
      onFrame: () => {},
    });
    const frame = syntheticFrame(0, { width: 320, height: 180 }, Date.now());
    expect(() => encoder.encode(frame)).toThrow(/320x180/);
    await encoder.close();
  });

  it("reports an encoder that cannot start, and stops trying", async () => {
    const errors: Error[] = [];
    const encoder = new VideoEncoder({
      encoding: { codec: "H264", width: 640, height: 360 },
      onFrame: () => {},
      onError: (e) => errors.push(e),
      ffmpegPath: "/nonexistent/ffmpeg",
    });
    for await (const frame of syntheticFrames({ width: 640, height: 360, count: 10 })) {
      encoder.encode(frame);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(errors.length).toBe(1);
    await encoder.close();
  });
});

describe("opus encoder", () => {
  it("makes two 20 ms packets per 40 ms frame and refuses odd lengths", () => {
    const opus = new OpusEncoder();
    const packets = opus.encode(new Int16Array(1920));
    expect(packets).toHaveLength(2);
    expect(() => opus.encode(new Int16Array(100))).toThrow(/multiples of 960/);
    opus.close();
    expect(() => opus.encode(new Int16Array(960))).toThrow(/closed/);
  });
});
