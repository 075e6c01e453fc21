import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { syntheticFrames } from "../src/bench/synthetic-frames.js";
import { itemAt } from "../src/checked.js";
import { liveEncoderPids, liveEncoderProcesses } from "../src/encode/encoder-process.js";
import { type VideoCodecName, videoSize } from "../src/frames.js";
import { MediaSession } from "../src/media-session.js";
import { MkvRecorder } from "../src/record/recorder.js";
import { livePeerConnections } from "../src/webrtc/peer-connection.js";
import { WhepError } from "../src/webrtc/whep-errors.js";
import { WhepViewer, type WhepViewerOptions } from "../src/webrtc/whep-viewer.js";
import { decodeWithFfmpeg } from "./ffmpeg-decode.js";
import { until } from "./support.js";

const dir = await mkdtemp(join(tmpdir(), "media-session-"));
const { width, height } = videoSize("low");
const sessions: MediaSession[] = [];

function startSession(
  codec: VideoCodecName,
  viewerTimeouts?: { connectMs?: number; disconnectGraceMs?: number; silenceMs?: number },
) {
  const gone: string[] = [];
  const session = new MediaSession({
    frames: syntheticFrames({ width, height, realtime: true }),
    video: { codec, width, height },
    rtc: { iceServers: [], bindAddress: "127.0.0.1" },
    ...(viewerTimeouts ? { viewerTimeouts } : {}),
    onViewerGone: (id, reason) => gone.push(`${id}:${reason}`),
  });
  sessions.push(session);
  return { session, gone };
}

/** A Node viewer negotiating directly with the session (the gateway's route does the same over HTTP). */
function watch(session: MediaSession, options: WhepViewerOptions = {}) {
  let viewerId = "";
  const viewer = WhepViewer.connect(
    async (offer) => {
      const answer = await session.addViewer(offer);
      viewerId = answer.viewerId;
      return { answerSdp: answer.answerSdp, end: async () => session.removeViewer(answer.viewerId) };
    },
    { settings: { iceServers: [], bindAddress: "127.0.0.1" }, ...options },
  );
  return viewer.then((v) => ({ viewer: v, viewerId }));
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  expect(liveEncoderProcesses()).toBe(0);
  expect(livePeerConnections()).toBe(0);
});

describe("media session over WHEP", () => {
  it("sends a new viewer its first sender reports within half a second, then one a second", async () => {
    const { session } = startSession("VP8");
    let firstFrameAt = 0;
    const reportsAt: number[] = [];
    const { viewer } = await watch(session, {
      onVideoFrame: () => {
        firstFrameAt ||= performance.now();
      },
      onAudioPacket: () => {},
      onSenderReport: (report) => {
        if (report.kind === "audio") reportsAt.push(performance.now());
      },
    });
    await until(() => reportsAt.length >= 5);
    await viewer.close();
    const after = reportsAt.map((t) => t - firstFrameAt);
    // Two reports of each stream let a receiver line audio up with video: the third comes within
    // about half a second of the first frame, not two seconds later.
    expect(after[2]).toBeLessThan(800);
    const steady = (after[4] as number) - (after[3] as number);
    expect(steady).toBeGreaterThan(700);
    expect(steady).toBeLessThan(1_400);
  });

  it.each(["H264", "VP8"] as const)(
    "%s: two viewers each receive decodable video and audio",
    async (codec) => {
      const { session } = startSession(codec);
      const recorders = [0, 1].map((i) => new MkvRecorder(join(dir, `two-${codec}-${i}.mkv`)));
      const viewers = await Promise.all(
        recorders.map((r) => watch(session, { codecs: ["H264", "VP8"], ...r.viewerCallbacks() })),
      );
      expect(viewers.every(({ viewer }) => viewer.videoCodec === codec)).toBe(true);
      // firstVideoFrame settles on a picture, not on the connection.
      for (const { viewer } of viewers) {
        await viewer.firstVideoFrame;
        expect(viewer.stats.videoFrames).toBeGreaterThan(0);
      }
      await until(() => viewers.every(({ viewer }) => viewer.stats.videoFrames >= 40));
      for (const { viewer } of viewers) await viewer.close();
      for (const [i, recorder] of recorders.entries()) {
        const summary = await recorder.close();
        expect(summary.timeline).toBe("sender-reports");
        const decoded = decodeWithFfmpeg(summary.path);
        expect(decoded).toMatchObject({ width, height });
        // Every frame written decodes (after a loss the viewer holds frames back to a keyframe).
        const why = `viewer ${JSON.stringify(viewers[i]?.viewer.stats)}; ffmpeg: ${decoded.videoErrors}`;
        expect(summary.videoFrames).toBeGreaterThanOrEqual(40);
        expect(decoded.videoFrames, why).toBe(summary.videoFrames);
        expect(decoded.audioSeconds).toBeGreaterThan(1.2);
        // The synthetic tone is in the audio (not only silence).
        expect(Math.max(...decoded.pcm.subarray(0, 48_000 * 2).map(Math.abs))).toBeGreaterThan(3000);
      }
      expect(session.viewerCount).toBe(0);
      // Nobody watches: the encoders are gone.
      await until(() => liveEncoderProcesses() === 0);
    },
  );

  it("refuses a fifth viewer with too_many_viewers, and takes one again after a DELETE", async () => {
    const { session } = startSession("H264");
    const viewers = await Promise.all([0, 1, 2, 3].map(() => watch(session)));
    const fifth = await watch(session).catch((e: unknown) => e);
    expect(fifth).toBeInstanceOf(WhepError);
    expect((fifth as WhepError).kind).toBe("too_many_viewers");
    expect(livePeerConnections()).toBe(8); // four viewers and their four server peers, the fifth left nothing
    await itemAt(viewers, 0).viewer.close();
    expect(session.viewerCount).toBe(3);
    const again = await watch(session);
    expect(session.viewerCount).toBe(4);
    for (const { viewer } of [again, ...viewers]) await viewer.close();
    expect(() => session.removeViewer(itemAt(viewers, 1).viewerId)).toThrow(WhepError);
  });

  it("refuses a bad offer before making a peer", async () => {
    const { session } = startSession("H264");
    const error = await session.addViewer("v=0\r\nnot an offer").catch((e: unknown) => e);
    expect((error as WhepError).kind).toBe("bad_offer");
    expect(livePeerConnections()).toBe(0);
  });

  it("cleans up a viewer that vanishes without DELETE", async () => {
    const { session, gone } = startSession("H264", { disconnectGraceMs: 300, silenceMs: 1500 });
    const { viewer, viewerId } = await watch(session);
    await until(() => viewer.stats.videoFrames > 5);
    await viewer.close({ silently: true });
    await until(() => session.viewerCount === 0, 20_000);
    expect(gone[0]).toMatch(new RegExp(`^${viewerId}:`));
    await until(() => liveEncoderProcesses() === 0);
  });

  it("drops a viewer that never connects", async () => {
    const { session, gone } = startSession("VP8", { connectMs: 300 });
    const offerOnly = await new Promise<string>((resolve, reject) => {
      WhepViewer.connect(async (offer) => {
        resolve(offer);
        throw new Error("abandoned");
      }).catch(() => {});
      setTimeout(() => reject(new Error("no offer")), 5000);
    });
    await session.addViewer(offerOnly);
    expect(session.viewerCount).toBe(1);
    // An encoder was started ahead while it connected; nothing is encoded for a viewer not connected.
    expect(liveEncoderProcesses()).toBe(1);
    await until(() => session.viewerCount === 0);
    expect(gone[0]).toMatch(/never-connected/);
    expect(session.stats.video.submitted).toBe(0);
    // The session goes on, and the encoder started for that viewer is gone.
    await until(() => liveEncoderProcesses() === 0);
  });

  it("gives a late joiner a keyframe of its own, and answers a viewer's PLI", async () => {
    const { session } = startSession("H264");
    const first = await watch(session);
    await until(() => first.viewer.stats.videoFrames > 10);
    // The first viewer's keyframe is a fresh encoder's first frame: encoding began once it connected
    // (a handover only for a keyframe it asked for after a lost packet).
    expect(session.stats.video.handovers).toBeLessThanOrEqual(first.viewer.stats.keyframeRequests);
    const firstKeyframes = first.viewer.stats.keyframes;
    const late = await watch(session);
    await until(() => late.viewer.stats.videoFrames > 3);
    expect(late.viewer.stats.keyframes).toBeGreaterThanOrEqual(1);
    // The handover reached the first viewer as a keyframe too, without a gap.
    expect(first.viewer.stats.keyframes).toBeGreaterThan(firstKeyframes);
    expect(first.viewer.stats.lostPackets).toBe(0);
    const before = session.stats.video.handovers;
    const keyframesBefore = first.viewer.stats.keyframes;
    // The PLI goes out on the audio track (the video one is recvonly) and still reaches the video.
    expect(first.viewer.requestKeyframe()).toBe(true);
    await until(() => session.stats.video.handovers > before);
    await until(() => first.viewer.stats.keyframes > keyframesBefore);
    const ms = session.stats.firstFrameAfterAnswerMs;
    expect(ms).toHaveLength(2);
    await first.viewer.close();
    await late.viewer.close();
  });

  it("sends each frame's audio as the frame comes, even while the video encoder is stopped", async () => {
    const { session } = startSession("H264");
    const audioAt: number[] = [];
    const { viewer } = await watch(session, {
      onAudioPacket: (packet) => audioAt.push(packet.receivedAt),
    });
    await until(() => viewer.stats.videoFrames > 10);
    // The encoder stands still (SIGSTOP: a machine too busy to run it); the voice must not wait for it.
    const stopped = liveEncoderPids();
    for (const pid of stopped) process.kill(pid, "SIGSTOP");
    const from = Date.now();
    try {
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      for (const pid of stopped) process.kill(pid, "SIGCONT");
    }
    const during = audioAt.filter((t) => t >= from && t < from + 1000).length;
    await viewer.close();
    // 50 packets of 20 ms are due in that second. Audio held for its video frame would stop after the
    // first and then trickle, late: about half of them.
    expect(during).toBeGreaterThanOrEqual(40);
  });

  it("encodes nothing while nobody watches, and taps see every raw frame", async () => {
    const { session } = startSession("H264");
    let tapped = 0;
    const untap = session.tap(() => tapped++);
    await until(() => tapped >= 5);
    expect(liveEncoderProcesses()).toBe(0);
    expect(session.stats.video.submitted).toBe(0);
    untap();
  });
});
