/**
 * Records what a WHEP viewer receives to a Matroska file a person can play (`.mkv`; `.webm` for VP8):
 * video and Opus audio on one timeline built from the sender reports (as a browser lines them up), so
 * the file shows the same lip sync the viewer got. `pnpm session-client --record FILE` uses it.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { MEDIA_SAMPLE_RATE } from "../frames.js";
import { NAL_PPS, NAL_SPS, nalType, splitAnnexB } from "../rtp/h264.js";
import { vp8KeyframeSize } from "../rtp/vp8.js";
import type {
  ReceivedAudioPacket,
  ReceivedSenderReport,
  ReceivedVideoFrame,
  WhepViewerOptions,
} from "../webrtc/whep-viewer.js";
import { h264SpsSize } from "./h264-sps.js";
import {
  AUDIO_TRACK,
  avcDecoderConfig,
  type Block,
  type MatroskaTracks,
  matroskaCluster,
  matroskaHeader,
  opusHead,
  VIDEO_TRACK,
} from "./matroska.js";

/** Blocks are held this long so audio and video can be written in time order. */
const REORDER_MS = 500;
const CLUSTER_MS = 1000;
/** Without sender reports by then, arrival times place the media instead. */
const SENDER_REPORT_WAIT_MS = 2000;

interface Mapping {
  ntpMs: number;
  rtpTimestamp: number;
}

export interface RecordingSummary {
  path: string;
  videoFrames: number;
  audioPackets: number;
  durationMs: number;
  /** How the timeline was built: from sender reports, or from arrival times when none came. */
  timeline: "sender-reports" | "arrival";
}

export class MkvRecorder {
  private readonly out: WriteStream;
  private readonly mapping: { video?: Mapping; audio?: Mapping } = {};
  private readonly waiting: Array<{
    kind: "video" | "audio";
    rtp: number;
    receivedAt: number;
    block: Omit<Block, "timeMs">;
  }> = [];
  private queue: Block[] = [];
  private cluster: Block[] = [];
  private headerWritten = false;
  private video: MatroskaTracks["video"];
  private originMs: number | undefined;
  private readonly lastTime = new Map<number, number>([
    [VIDEO_TRACK, -1],
    [AUDIO_TRACK, -1],
  ]);
  /** When the first media came (not when the recorder was made: a viewer may take seconds to connect). */
  private firstArrival: number | undefined;
  private timeline: RecordingSummary["timeline"] = "sender-reports";
  private counts = { videoFrames: 0, audioPackets: 0, maxTime: 0 };

  constructor(
    readonly path: string,
    /** The clock `receivedAt` is read on (the viewer's: Date.now). */
    private readonly now: () => number = Date.now,
  ) {
    this.out = createWriteStream(path);
  }

  /** The viewer callbacks that feed this recorder (spread into WhepViewer.connect's options). */
  viewerCallbacks(): Pick<WhepViewerOptions, "onVideoFrame" | "onAudioPacket" | "onSenderReport"> {
    return {
      onVideoFrame: (frame) => this.videoFrame(frame),
      onAudioPacket: (packet) => this.audioPacket(packet),
      onSenderReport: (report) => this.senderReport(report),
    };
  }

  senderReport(report: ReceivedSenderReport): void {
    this.mapping[report.kind] = { ntpMs: report.ntpMs, rtpTimestamp: report.rtpTimestamp };
    this.place();
  }

  videoFrame(frame: ReceivedVideoFrame): void {
    if (!this.video) {
      if (!frame.keyframe) return; // nothing decodes before the first keyframe
      this.video = this.describeVideo(frame);
    }
    const data = frame.codec === "H264" ? toLengthPrefixed(frame.data) : frame.data;
    this.waiting.push({
      kind: "video",
      rtp: frame.rtpTimestamp,
      receivedAt: frame.receivedAt,
      block: { track: VIDEO_TRACK, keyframe: frame.keyframe, data },
    });
    this.place();
  }

  audioPacket(packet: ReceivedAudioPacket): void {
    this.waiting.push({
      kind: "audio",
      rtp: packet.rtpTimestamp,
      receivedAt: packet.receivedAt,
      block: { track: AUDIO_TRACK, keyframe: true, data: packet.data },
    });
    this.place();
  }

  private describeVideo(frame: ReceivedVideoFrame): MatroskaTracks["video"] {
    if (frame.codec === "VP8") {
      const size = vp8KeyframeSize(frame.data) ?? { width: 0, height: 0 };
      return { codecId: "V_VP8", ...size };
    }
    const units = splitAnnexB(frame.data);
    const sps = units.find((u) => nalType(u) === NAL_SPS);
    const pps = units.find((u) => nalType(u) === NAL_PPS);
    if (!sps || !pps) return undefined;
    return { codecId: "V_MPEG4/ISO/AVC", ...h264SpsSize(sps), codecPrivate: avcDecoderConfig(sps, pps) };
  }

  /** Gives waiting media its time on the timeline once both tracks' sender reports are known. */
  private place(force = false): void {
    const { video, audio } = this.mapping;
    const haveReports = video !== undefined && audio !== undefined;
    this.firstArrival ??= this.waiting[0]?.receivedAt;
    const waited = this.now() - (this.firstArrival ?? this.now());
    if (!haveReports && !force && waited < SENDER_REPORT_WAIT_MS) return;
    if (!haveReports) this.timeline = "arrival";
    for (const item of this.waiting.splice(0)) {
      const map = this.mapping[item.kind];
      const rate = item.kind === "video" ? 90_000 : MEDIA_SAMPLE_RATE;
      const wall =
        haveReports && map
          ? map.ntpMs + (((item.rtp - map.rtpTimestamp) | 0) * 1000) / rate
          : item.receivedAt;
      this.originMs ??= wall;
      let timeMs = Math.max(0, Math.round(wall - this.originMs));
      // Block times never go backwards within a track.
      timeMs = Math.max(timeMs, (this.lastTime.get(item.block.track) ?? -1) + 1);
      this.lastTime.set(item.block.track, timeMs);
      this.queue.push({ ...item.block, timeMs });
      if (item.kind === "video") this.counts.videoFrames++;
      else this.counts.audioPackets++;
      this.counts.maxTime = Math.max(this.counts.maxTime, timeMs);
    }
    this.flush(false);
  }

  private flush(all: boolean): void {
    this.queue.sort((a, b) => a.timeMs - b.timeMs);
    const latest = this.queue.at(-1)?.timeMs ?? 0;
    for (
      let block = this.queue[0];
      block && (all || block.timeMs < latest - REORDER_MS);
      block = this.queue[0]
    ) {
      this.queue.shift();
      if (!this.headerWritten) {
        this.out.write(
          matroskaHeader(
            {
              ...(this.video ? { video: this.video } : {}),
              audio: {
                codecId: "A_OPUS",
                sampleRate: MEDIA_SAMPLE_RATE,
                channels: 1,
                codecPrivate: opusHead(1, MEDIA_SAMPLE_RATE),
              },
            },
            this.video?.codecId === "V_VP8" ? "webm" : "matroska",
          ),
        );
        this.headerWritten = true;
      }
      if (block.track === VIDEO_TRACK && !this.video) continue;
      const start = this.cluster[0]?.timeMs;
      if (
        start !== undefined &&
        (block.timeMs - start >= CLUSTER_MS || (block.keyframe && block.track === VIDEO_TRACK))
      ) {
        this.out.write(matroskaCluster(this.cluster));
        this.cluster = [];
      }
      this.cluster.push(block);
    }
    if (all && this.cluster.length > 0) {
      this.out.write(matroskaCluster(this.cluster));
      this.cluster = [];
    }
  }

  /** Writes what is left and closes the file. */
  async close(): Promise<RecordingSummary> {
    this.place(true);
    this.flush(true);
    await new Promise<void>((resolve, reject) =>
      this.out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    return {
      path: this.path,
      videoFrames: this.counts.videoFrames,
      audioPackets: this.counts.audioPackets,
      durationMs: this.counts.maxTime,
      timeline: this.timeline,
    };
  }
}

/** Annex B to the 4-byte length-prefixed NAL units Matroska stores. */
function toLengthPrefixed(accessUnit: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  for (const unit of splitAnnexB(accessUnit)) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(unit.length);
    parts.push(length, Buffer.from(unit));
  }
  return Buffer.concat(parts);
}
