/**
 * Building blocks of `pnpm bench:media`: each runs one measurement and returns figures. The frames come
 * from a FrameSource (`pnpm bench:media` gives the avatar's renderer speaking; by default SYNTHETIC frames,
 * see synthetic-frames.ts). CPU figures are process CPU time (ours plus the ffmpeg children's, from
 * /proc), so they hold on a shared machine better than wall time does.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { itemAt } from "../checked.js";
import { liveEncoderPids } from "../encode/encoder-process.js";
import { ffmpegBinary } from "../encode/ffmpeg-binary.js";
import { ffmpegVideoArgs } from "../encode/video-encoding.js";
import { type AvFrame, FRAME_MS, type VideoCodecName, type VideoQualityName, videoSize } from "../frames.js";
import { MediaSession } from "../media-session.js";
import type { AvatarVideoGenerator } from "../video-generator.js";
import { WhepViewer } from "../webrtc/whep-viewer.js";
import { syntheticFrame, syntheticFrames } from "./synthetic-frames.js";

const TICK_MS = 10; // /proc clock ticks (USER_HZ 100)

/** Where a benchmark's frames come from: a real-time stream, and stills for the bare encoder. */
type Frames = AsyncIterable<AvFrame> | AvatarVideoGenerator;

export interface FrameSource {
  /** A real-time stream of frames (a renderer is made asynchronously: it rasterizes its look first). */
  stream(quality: VideoQualityName): Promise<Frames> | Frames;
  /** `count` consecutive frames' pixels, rendered now (the same kind of frames the stream has). */
  stills(quality: VideoQualityName, count: number): Promise<Uint8Array[]> | Uint8Array[];
}

export const syntheticSource: FrameSource = {
  stream: (quality) => syntheticFrames({ ...videoSize(quality), realtime: true }),
  stills: (quality, count) =>
    Array.from({ length: count }, (_, i) => syntheticFrame(i, videoSize(quality), 0).video.data),
};

function childCpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      // The fields after the command name (which is in parentheses and may hold spaces).
      const after = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1];
      if (after === undefined) continue;
      const fields = after.split(" ");
      total += (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      // exited
    }
  }
  return total;
}

/** The floor: the same frames through one bare ffmpeg encoder (same arguments), CPU ms per frame. */
export async function bareEncoderCost(
  codec: VideoCodecName,
  quality: VideoQualityName,
  frames = 100,
  source: FrameSource = syntheticSource,
) {
  const { width, height } = videoSize(quality);
  const inputs = await source.stills(quality, 50);
  const child = spawn(ffmpegBinary(), ffmpegVideoArgs({ codec, width, height }), {
    stdio: ["pipe", "pipe", "ignore"],
  });
  child.stdout.resume();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${ffmpegBinary()} did not start`);
  let peak = 0;
  for (let i = 0; i < frames; i++) {
    if (!child.stdin.write(itemAt(inputs, i % inputs.length)))
      await new Promise((r) => child.stdin.once("drain", r));
    if (i === frames - 2) peak = childCpuMs([pid]);
  }
  const cpu = Math.max(peak, childCpuMs([pid]));
  child.stdin.end();
  await new Promise((r) => child.once("close", r));
  return { codec, quality, cpuMsPerFrame: cpu / frames };
}

/** A real-time session with `viewers` Node viewers: CPU per frame (ours + encoders), first frame, sync. */
export async function sessionCost(
  codec: VideoCodecName,
  quality: VideoQualityName,
  seconds = 5,
  viewers = 1,
  source: FrameSource = syntheticSource,
) {
  const { width, height } = videoSize(quality);
  const session = new MediaSession({
    frames: await source.stream(quality),
    video: { codec, width, height },
    rtc: { iceServers: [], bindAddress: "127.0.0.1" },
  });
  const reports: { video?: { ntpMs: number; rtp: number }; audio?: { ntpMs: number; rtp: number } } = {};
  const offsets: number[] = [];
  const lastVideo = { rtp: 0, at: 0 };
  const connected = await Promise.all(
    Array.from({ length: viewers }, (_, i) =>
      WhepViewer.connect(
        async (offer) => {
          const a = await session.addViewer(offer);
          return { answerSdp: a.answerSdp, end: async () => session.removeViewer(a.viewerId) };
        },
        {
          settings: { iceServers: [], bindAddress: "127.0.0.1" },
          ...(i === 0
            ? {
                onSenderReport: (r) => {
                  reports[r.kind] = { ntpMs: r.ntpMs, rtp: r.rtpTimestamp };
                },
                onVideoFrame: (f) => {
                  lastVideo.rtp = f.rtpTimestamp;
                },
                onAudioPacket: (p) => {
                  // Where the receiver's clock mapping puts this audio versus the video of the same
                  // source frame (the audio packet at frame start n*1920 pairs with video n*3600).
                  const { video, audio } = reports;
                  if (!video || !audio) return;
                  const audioMs = audio.ntpMs + (((p.rtpTimestamp - audio.rtp) | 0) / 48_000) * 1000;
                  const frameMs = ((((p.rtpTimestamp - audio.rtp) | 0) / 48_000) * 1000) % FRAME_MS;
                  if (Math.abs(frameMs) > 1 && Math.abs(frameMs - FRAME_MS) > 1) return;
                  const videoRtp = (video.rtp + Math.round(((audioMs - video.ntpMs) * 90_000) / 1000)) >>> 0;
                  // The video timestamp the receiver pairs with this audio must be a frame boundary.
                  const videoFrameMs = ((((videoRtp - lastVideo.rtp) | 0) / 90_000) * 1000) % FRAME_MS;
                  offsets.push(Math.min(Math.abs(videoFrameMs), FRAME_MS - Math.abs(videoFrameMs)));
                },
              }
            : {}),
        },
      ),
    ),
  );
  await new Promise((r) => setTimeout(r, 1000)); // warm-up: connect, keyframe
  const ownBefore = process.cpuUsage();
  const pids = liveEncoderPids();
  const childBefore = childCpuMs(pids);
  const framesBefore = session.stats.framesIn;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const own = process.cpuUsage(ownBefore);
  const childMs = childCpuMs(pids) - childBefore;
  const frames = session.stats.framesIn - framesBefore;
  const stats = session.stats;
  const received = connected.map((v) => v.stats.videoFrames);
  for (const v of connected) await v.close();
  await session.close();
  return {
    codec,
    quality,
    viewers,
    frames,
    cpuMsPerFrame: ((own.user + own.system) / 1000 + childMs) / frames,
    encoderCpuMsPerFrame: childMs / frames,
    cpuPercentPerSession: (((own.user + own.system) / 1000 + childMs) / (seconds * 1000)) * 100,
    droppedFrames: stats.video.dropped,
    firstFrameAfterAnswerMs: stats.firstFrameAfterAnswerMs,
    receivedFramesPerViewer: received,
    /** The receiver's SR mapping: how far (ms) audio lands from a video frame boundary; 0 = in step. */
    syncOffsetMs: offsets.length > 0 ? Math.max(...offsets) : undefined,
  };
}

/**
 * `count` concurrent real-time sessions, one viewer each, for `seconds`: whether every viewer got
 * >= 24 fps. Step count up to find the most this machine keeps.
 */
export async function concurrentSessions(
  count: number,
  codec: VideoCodecName = "H264",
  quality: VideoQualityName = "high",
  seconds = 6,
  source: FrameSource = syntheticSource,
) {
  const { width, height } = videoSize(quality);
  const streams = await Promise.all(Array.from({ length: count }, () => source.stream(quality)));
  const sessions = streams.map(
    (frames) =>
      new MediaSession({
        frames,
        video: { codec, width, height },
        rtc: { iceServers: [], bindAddress: "127.0.0.1" },
      }),
  );
  const viewers = await Promise.all(
    sessions.map((s) =>
      WhepViewer.connect(
        async (offer) => {
          const a = await s.addViewer(offer);
          return { answerSdp: a.answerSdp, end: async () => s.removeViewer(a.viewerId) };
        },
        { settings: { iceServers: [], bindAddress: "127.0.0.1" } },
      ),
    ),
  );
  await new Promise((r) => setTimeout(r, 1500));
  const before = viewers.map((v) => v.stats.videoFrames);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const fps = viewers.map((v, i) => (v.stats.videoFrames - itemAt(before, i)) / seconds);
  for (const v of viewers) await v.close();
  await Promise.all(sessions.map((s) => s.close()));
  return {
    count,
    codec,
    quality,
    minFps: Math.min(...fps),
    meanFps: fps.reduce((a, b) => a + b, 0) / fps.length,
    keeps25: Math.min(...fps) >= 24,
  };
}
