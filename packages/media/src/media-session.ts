/**
 * A session's media fan-out: one stream of AvFrames in; raw frames to every tap (transportA publishing,
 * metrics); and, while at least one WHEP viewer watches, one encoder (video) and one Opus encoder whose
 * output is packetized once and sent to every viewer. Nobody watching, nothing encoded.
 *
 * Sync: both tracks are stamped from one MediaClock, anchored at the moment each frame comes in, and
 * sender reports tell the receiver so; its lip sync delays the audio by what the video's encode takes.
 * A frame's audio leaves as the frame comes in, not after its video: audio held for a video frame that
 * the encoder is late with or drops would reach the receiver in a burst, late, and its jitter buffer
 * would keep that lateness, hundreds of ms of voice behind the picture for many seconds.
 */
import { randomUUID } from "node:crypto";
import { OPUS_RTP_CLOCK, OpusEncoder } from "./encode/opus-encoder.js";
import { VideoEncoder, type VideoEncoderStats } from "./encode/video-encoder.js";
import type { EncodedVideoFrame, VideoEncoding } from "./encode/video-encoding.js";
import { type AvFrame, VIDEO_RTP_CLOCK } from "./frames.js";
import { MediaClock } from "./media-clock.js";
import { packetizeH264 } from "./rtp/h264.js";
import { random32 } from "./rtp/rtp-packet.js";
import { packetizeVp8 } from "./rtp/vp8.js";
import type { AvatarVideoGenerator } from "./video-generator.js";
import type { RtcSettings } from "./webrtc/rtc-settings.js";
import { parseWhepOffer } from "./webrtc/sdp-offer.js";
import { ViewerPeer } from "./webrtc/viewer-peer.js";
import { WhepError } from "./webrtc/whep-errors.js";

/** At most this many viewers watch one session (contract section 7: the fifth gets 429). */
export const MAX_VIEWERS_PER_SESSION = 4;
/** RTP payload size: fits a 1200-byte budget with SRTP and headers under any usual path MTU. */
const MAX_RTP_PAYLOAD = 1160;
/** Sender reports every second, after a first few closer together (below). */
const SENDER_REPORT_INTERVAL_MS = 1000;
/**
 * A receiver lines audio up with video only once it has two sender reports of each stream, and then
 * moves its delays a step at a time: the first reports after a viewer's first frame come this often, so
 * its lip sync starts settling within half a second instead of after the second one.
 */
const FIRST_SENDER_REPORTS = 3;
const FIRST_SENDER_REPORT_INTERVAL_MS = 250;

export interface MediaSessionOptions {
  frames: AsyncIterable<AvFrame> | AvatarVideoGenerator;
  video: VideoEncoding;
  rtc: RtcSettings;
  maxViewers?: number;
  ffmpegPath?: string;
  /** Wall clock (epoch ms) for sender reports and timings. */
  now?: () => number;
  viewerTimeouts?: { connectMs?: number; disconnectGraceMs?: number; silenceMs?: number };
  onViewerGone?: (viewerId: string, reason: string) => void;
  onError?: (error: Error) => void;
}

export interface MediaSessionStats {
  framesIn: number;
  video: VideoEncoderStats;
  audioPackets: number;
  viewers: number;
  /** Per viewer that got media: ms from its answer to its first frame sent. */
  firstFrameAfterAnswerMs: number[];
}

interface Viewer {
  id: string;
  peer: ViewerPeer;
  answeredAt: number;
  /** Sends nothing until a keyframe comes (a decoder cannot start from anything else). */
  waitingForKeyframe: boolean;
  /** Sender reports sent to this viewer, and when the next one is due. */
  senderReports: number;
  nextSenderReportAt: number;
}

export class MediaSession {
  private readonly viewers = new Map<string, Viewer>();
  private reserved = 0;
  private readonly taps = new Set<(frame: AvFrame) => void>();
  private readonly clock = new MediaClock(VIDEO_RTP_CLOCK, OPUS_RTP_CLOCK);
  private readonly videoSsrc = random32();
  private readonly audioSsrc = random32();
  private readonly cname = randomUUID();
  private readonly now: () => number;
  private readonly abort = new AbortController();
  private readonly pump: Promise<void>;
  private readonly srTimer: NodeJS.Timeout;
  private encoder: VideoEncoder | undefined;
  private opus: OpusEncoder | undefined;
  private pictureId = random32() & 0x7fff;
  private closed = false;
  /** Encoders being shut down (close() waits for them). */
  private readonly stopping = new Set<Promise<void>>();
  private readonly statsCounters = { framesIn: 0, audioPackets: 0, firstFrameAfterAnswerMs: [] as number[] };
  /** Counts of the encoders that have stopped (one per period with viewers); the running one adds its own. */
  private pastEncoderStats: VideoEncoderStats = { submitted: 0, encoded: 0, dropped: 0, handovers: 0 };

  constructor(private readonly options: MediaSessionOptions) {
    this.now = options.now ?? Date.now;
    this.pump = this.run();
    this.srTimer = setInterval(() => this.sendSenderReports(), FIRST_SENDER_REPORT_INTERVAL_MS);
    this.srTimer.unref();
  }

  /** Answers a WHEP offer: a viewer id (for the resource's Location) and the SDP answer. */
  async addViewer(offerBody: unknown): Promise<{ viewerId: string; answerSdp: string }> {
    if (this.closed) throw new WhepError("unknown_viewer", "the session's media has ended");
    const offer = parseWhepOffer(offerBody);
    const max = this.options.maxViewers ?? MAX_VIEWERS_PER_SESSION;
    if (this.viewers.size + this.reserved >= max) {
      throw new WhepError("too_many_viewers", `at most ${max} viewers watch one session`);
    }
    this.reserved++;
    // Both encoders get ready while the viewer connects: ffmpeg starts, and the first Opus encoder of
    // the process compiles its WebAssembly (tens of ms) now rather than as the picture starts.
    this.videoEncoder().warm();
    this.audioEncoder();
    const id = randomUUID();
    try {
      const peer = await ViewerPeer.answer({
        id,
        offer,
        codec: this.options.video.codec,
        videoSsrc: this.videoSsrc,
        audioSsrc: this.audioSsrc,
        cname: this.cname,
        settings: this.options.rtc,
        connectTimeoutMs: this.options.viewerTimeouts?.connectMs,
        disconnectGraceMs: this.options.viewerTimeouts?.disconnectGraceMs,
        silenceMs: this.options.viewerTimeouts?.silenceMs,
        onConnected: () => this.encoder?.requestKeyframe(),
        onKeyframeRequest: () => this.encoder?.requestKeyframe(),
        onGone: (reason) => this.viewerGone(id, reason),
      });
      if (this.closed) {
        peer.close();
        throw new WhepError("unknown_viewer", "the session's media has ended");
      }
      this.viewers.set(id, {
        id,
        peer,
        answeredAt: this.now(),
        waitingForKeyframe: true,
        senderReports: 0,
        nextSenderReportAt: 0,
      });
      return { viewerId: id, answerSdp: peer.answerSdp };
    } finally {
      this.reserved--;
      if (this.viewers.size === 0 && this.reserved === 0) void this.stopEncoding();
    }
  }

  /** WHEP DELETE: ends the viewer. */
  removeViewer(viewerId: string): void {
    const viewer = this.viewers.get(viewerId);
    if (!viewer) throw new WhepError("unknown_viewer", "no such viewer in this session");
    this.dropViewer(viewer);
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  /** Every frame as it comes, raw (transportA publishing encodes its own way); returns an unsubscribe. */
  tap(listener: (frame: AvFrame) => void): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  /** Each frame as it leaves for the viewers (video and its audio). */
  get stats(): MediaSessionStats {
    return {
      framesIn: this.statsCounters.framesIn,
      video: addStats(this.pastEncoderStats, this.encoder?.stats),
      audioPackets: this.statsCounters.audioPackets,
      viewers: this.viewers.size,
      firstFrameAfterAnswerMs: [...this.statsCounters.firstFrameAfterAnswerMs],
    };
  }

  private viewerGone(id: string, reason: string): void {
    const viewer = this.viewers.get(id);
    if (!viewer) return;
    this.dropViewer(viewer);
    this.options.onViewerGone?.(id, reason);
  }

  private dropViewer(viewer: Viewer): void {
    this.viewers.delete(viewer.id);
    viewer.peer.close();
    if (this.viewers.size === 0) void this.stopEncoding();
  }

  private async run(): Promise<void> {
    const source = this.options.frames;
    const frames = "frames" in source ? source.frames(this.abort.signal) : source;
    try {
      for await (const frame of frames) {
        if (this.closed) break;
        this.statsCounters.framesIn++;
        for (const tap of this.taps) tap(frame);
        if (this.watched()) this.send(frame);
      }
    } catch (error) {
      if (!this.closed) this.options.onError?.(error as Error);
    }
  }

  /**
   * Frames are encoded once a viewer is connected: the encoder's first frame is then that viewer's
   * keyframe, with no handover (one fresh encoder fewer as the picture starts).
   */
  private watched(): boolean {
    for (const viewer of this.viewers.values()) if (viewer.peer.connected) return true;
    return false;
  }

  private videoEncoder(): VideoEncoder {
    this.encoder ??= new VideoEncoder({
      encoding: this.options.video,
      ...(this.options.ffmpegPath ? { ffmpegPath: this.options.ffmpegPath } : {}),
      onFrame: (encoded) => this.sendFrame(encoded),
      onError: (error) => this.options.onError?.(error),
    });
    return this.encoder;
  }

  private audioEncoder(): OpusEncoder {
    this.opus ??= new OpusEncoder();
    return this.opus;
  }

  /** A watched frame: its video into the encoder, its audio out now (to viewers that have their picture). */
  private send(frame: AvFrame): void {
    this.clock.sent(frame.index, this.now());
    this.videoEncoder().encode(frame);
    this.sendAudio(frame);
  }

  private sendFrame(encoded: EncodedVideoFrame): void {
    this.pictureId = (this.pictureId + 1) & 0x7fff;
    const payloads =
      encoded.codec === "H264"
        ? packetizeH264(encoded.data, MAX_RTP_PAYLOAD)
        : packetizeVp8(encoded.data, this.pictureId, MAX_RTP_PAYLOAD);
    const timestamp = this.clock.videoTimestamp(encoded.index);
    const sentAt = this.now();
    const newcomers: Viewer[] = [];
    for (const viewer of this.viewers.values()) {
      if (viewer.waitingForKeyframe) {
        if (!encoded.keyframe || !viewer.peer.connected) continue;
        viewer.waitingForKeyframe = false;
        newcomers.push(viewer);
        this.statsCounters.firstFrameAfterAnswerMs.push(sentAt - viewer.answeredAt);
      }
      viewer.peer.sendVideo(payloads, timestamp);
    }
    for (const viewer of newcomers) this.sendSenderReportsTo(viewer, sentAt);
  }

  /**
   * Encodes a frame's audio and sends it to every viewer that has its picture (a newcomer's voice starts
   * with the frames after its first keyframe, on time, rather than with a burst of what came before).
   */
  private sendAudio(frame: AvFrame): void {
    const packets = this.audioEncoder().encode(frame.audio);
    packets.forEach((packet, k) => {
      const timestamp = this.clock.audioTimestamp(frame.index, k * (frame.audio.length / packets.length));
      for (const viewer of this.viewers.values()) {
        if (!viewer.waitingForKeyframe) viewer.peer.sendAudio(packet, timestamp);
      }
      this.statsCounters.audioPackets++;
    });
  }

  /** The sender reports that are due. */
  private sendSenderReports(): void {
    const now = this.now();
    for (const viewer of this.viewers.values()) {
      if (!viewer.waitingForKeyframe && now >= viewer.nextSenderReportAt)
        this.sendSenderReportsTo(viewer, now);
    }
  }

  private sendSenderReportsTo(viewer: Viewer, now: number): void {
    const rtp = this.clock.at(now);
    if (!rtp) return;
    viewer.peer.sendSenderReports(now, rtp.video, rtp.audio);
    viewer.senderReports++;
    viewer.nextSenderReportAt =
      now +
      (viewer.senderReports < FIRST_SENDER_REPORTS
        ? FIRST_SENDER_REPORT_INTERVAL_MS
        : SENDER_REPORT_INTERVAL_MS) -
      // The timer's own tick: a report due between two ticks goes at the earlier one.
      FIRST_SENDER_REPORT_INTERVAL_MS / 2;
  }

  private async stopEncoding(): Promise<void> {
    const encoder = this.encoder;
    this.encoder = undefined;
    if (encoder) this.pastEncoderStats = addStats(this.pastEncoderStats, encoder.stats);
    this.opus?.close();
    this.opus = undefined;
    if (!encoder) return;
    const stop = encoder.close();
    this.stopping.add(stop);
    await stop;
    this.stopping.delete(stop);
  }

  /** Ends every viewer and encoder and stops reading frames; resolves when all processes are gone. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.srTimer);
    this.abort.abort();
    for (const viewer of [...this.viewers.values()]) {
      this.viewers.delete(viewer.id);
      viewer.peer.close();
    }
    await this.stopEncoding();
    await Promise.all(this.stopping);
    const frames = this.options.frames;
    if (!("frames" in frames)) {
      // Ends a generator waiting in its pacing sleep, so the pump finishes.
      void (frames as AsyncGenerator<AvFrame>).return?.(undefined);
    }
    await Promise.race([this.pump, new Promise((r) => setTimeout(r, 1000))]);
  }
}

function addStats(a: VideoEncoderStats, b: VideoEncoderStats | undefined): VideoEncoderStats {
  if (!b) return { ...a };
  return {
    submitted: a.submitted + b.submitted,
    encoded: a.encoded + b.encoded,
    dropped: a.dropped + b.dropped,
    handovers: a.handovers + b.handovers,
  };
}
