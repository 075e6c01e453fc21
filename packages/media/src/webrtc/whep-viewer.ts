/**
 * A WHEP viewer in Node (libdatachannel as the receiver): makes a recvonly offer, hands it to a
 * negotiator (HTTP POST to a WHEP endpoint, or a direct call in tests), sets the answer, and turns the
 * RTP it receives back into video frames and Opus packets with their RTP times and the sender reports.
 */
import ndc from "node-datachannel";
import type { VideoCodecName } from "../frames.js";
import { buildPli, buildReceiverReport, parseRtcp } from "../rtp/rtcp.js";
import { isRtcp, parseRtpPacket, random32, SequenceGaps } from "../rtp/rtp-packet.js";
import { closePeerConnection, createPeerConnection, gatheringComplete } from "./peer-connection.js";
import type { RtcSettings } from "./rtc-settings.js";
import { H264_FMTP } from "./sdp-offer.js";
import { VideoReceiver } from "./video-receiver.js";

export interface ReceivedVideoFrame {
  codec: VideoCodecName;
  rtpTimestamp: number;
  data: Uint8Array;
  keyframe: boolean;
  receivedAt: number;
}

export interface ReceivedAudioPacket {
  rtpTimestamp: number;
  data: Uint8Array;
  receivedAt: number;
}

export interface ReceivedSenderReport {
  kind: "video" | "audio";
  ntpMs: number;
  rtpTimestamp: number;
}

/** Sends the offer to the server, returns its answer and how to end the viewer (WHEP DELETE). */
export type WhepNegotiator = (offerSdp: string) => Promise<{ answerSdp: string; end?: () => Promise<void> }>;

export interface WhepViewerOptions {
  /** Video codecs offered (default both). */
  codecs?: VideoCodecName[];
  settings?: RtcSettings;
  onVideoFrame?: (frame: ReceivedVideoFrame) => void;
  onAudioPacket?: (packet: ReceivedAudioPacket) => void;
  onSenderReport?: (report: ReceivedSenderReport) => void;
}

const OFFER_PT = { H264: 102, VP8: 96, opus: 111 } as const;

/** A WHEP endpoint over HTTP: POST the offer (201 + Location), DELETE the location to end. */
export function whepOverHttp(url: string, headers: Record<string, string> = {}): WhepNegotiator {
  return async (offerSdp) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/sdp" },
      body: offerSdp,
    });
    const body = await response.text();
    if (response.status !== 201)
      throw new Error(`WHEP POST ${url}: ${response.status} ${body.slice(0, 300)}`);
    const location = response.headers.get("location");
    const resource = location ? new URL(location, url).toString() : undefined;
    return {
      answerSdp: body,
      end: async () => {
        if (resource) await fetch(resource, { method: "DELETE", headers });
      },
    };
  };
}

export class WhepViewer {
  /**
   * `videoFrames` counts the frames delivered, which all decode: after a loss, the frames up to the next
   * keyframe are `skippedFrames` instead (see VideoReceiver), and `keyframeRequests` counts the PLIs sent.
   */
  readonly stats = {
    videoFrames: 0,
    keyframes: 0,
    skippedFrames: 0,
    keyframeRequests: 0,
    audioPackets: 0,
    lostPackets: 0,
    senderReports: 0,
  };
  videoCodec: VideoCodecName = "H264";
  private end: (() => Promise<void>) | undefined;
  private readonly ownSsrc = random32();
  private audioSourceSsrc = 0;
  private videoSourceSsrc = 0;
  private reportTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private connectedResolve!: () => void;
  readonly connected = new Promise<void>((resolve) => {
    this.connectedResolve = resolve;
  });
  private firstVideoFrameResolve!: () => void;
  /** Settles when the first decodable picture arrives: a connection alone is not yet anything to see. */
  readonly firstVideoFrame = new Promise<void>((resolve) => {
    this.firstVideoFrameResolve = resolve;
  });

  private constructor(
    private readonly pc: ndc.PeerConnection,
    // Held so the native tracks live as long as the viewer (an unreferenced wrapper is collected and
    // takes its track with it).
    readonly videoTrack: ndc.Track,
    readonly audioTrack: ndc.Track,
    private readonly options: WhepViewerOptions,
  ) {}

  static async connect(negotiate: WhepNegotiator, options: WhepViewerOptions = {}): Promise<WhepViewer> {
    const pc = createPeerConnection("whep-viewer", options.settings ?? { iceServers: [] }, "offerer");
    try {
      const video = new ndc.Video("0", "RecvOnly");
      for (const codec of options.codecs ?? ["H264", "VP8"]) {
        if (codec === "H264") video.addH264Codec(OFFER_PT.H264, H264_FMTP);
        else video.addVP8Codec(OFFER_PT.VP8);
      }
      // sendrecv (the server answers sendonly): libdatachannel sends nothing on a recvonly track, and we
      // send a receiver report every second on this one, as browsers do, so the server knows we are here.
      const audio = new ndc.Audio("1", "SendRecv");
      audio.addOpusCodec(OFFER_PT.opus);
      const videoTrack = pc.addTrack(video);
      const audioTrack = pc.addTrack(audio);
      const viewer = new WhepViewer(pc, videoTrack, audioTrack, options);
      viewer.receive(videoTrack, "video");
      viewer.receive(audioTrack, "audio");
      pc.setLocalDescription();
      await gatheringComplete(pc, 5000);
      const offer = pc.localDescription();
      if (!offer) throw new Error("no local offer");
      // Our candidates stay out of the offer: the server then cannot finish ICE (and start DTLS) before
      // we hold its answer, a race libdatachannel loses by waiting out a 1 s DTLS retransmission. It
      // learns our address from our own checks (peer-reflexive).
      const { answerSdp, end } = await negotiate(offer.sdp.replace(/^a=candidate:.*\r?\n/gm, ""));
      viewer.end = end;
      const videoPt = /^m=video \S+ \S+ (\d+)/m.exec(answerSdp)?.[1];
      viewer.videoCodec = Number(videoPt) === OFFER_PT.VP8 ? "VP8" : "H264";
      pc.setRemoteDescription(answerSdp, "answer");
      viewer.reportTimer = setInterval(() => viewer.sendReceiverReport(), 1000);
      viewer.reportTimer.unref();
      return viewer;
    } catch (error) {
      closePeerConnection(pc);
      throw error;
    }
  }

  private receive(track: ndc.Track, kind: "video" | "audio"): void {
    const video =
      kind === "video"
        ? new VideoReceiver(
            () => this.videoCodec,
            () => this.requestKeyframe(),
          )
        : undefined;
    const audioGaps = new SequenceGaps();
    let opened = false;
    track.onOpen(() => {
      opened = true;
      this.connectedResolve();
    });
    track.onMessage((message) => {
      if (!opened) this.connectedResolve();
      const receivedAt = Date.now();
      if (isRtcp(message)) {
        for (const item of parseRtcp(message)) {
          if (item.type !== "sender-report") continue;
          this.stats.senderReports++;
          this.options.onSenderReport?.({ kind, ntpMs: item.ntpMs, rtpTimestamp: item.rtpTimestamp });
        }
        return;
      }
      const packet = parseRtpPacket(message);
      if (!packet) return;
      if (!video) {
        this.stats.lostPackets += audioGaps.next(packet.sequenceNumber);
        this.audioSourceSsrc = packet.ssrc;
        this.stats.audioPackets++;
        this.options.onAudioPacket?.({ rtpTimestamp: packet.timestamp, data: packet.payload, receivedAt });
        return;
      }
      this.videoSourceSsrc = packet.ssrc;
      const received = video.push(packet);
      this.stats.lostPackets += received.lost;
      if (received.skipped) this.stats.skippedFrames++;
      if (!received.frame) return;
      const { data, keyframe } = received.frame;
      if (this.stats.videoFrames++ === 0) this.firstVideoFrameResolve();
      if (keyframe) this.stats.keyframes++;
      this.options.onVideoFrame?.({
        codec: this.videoCodec,
        rtpTimestamp: packet.timestamp,
        data,
        keyframe,
        receivedAt,
      });
    });
  }

  private sendReceiverReport(): void {
    if (this.audioSourceSsrc !== 0) this.sendRtcp(buildReceiverReport(this.ownSsrc, this.audioSourceSsrc));
  }

  /** Sends a PLI; false until video has come (its SSRC is what the PLI names). */
  requestKeyframe(): boolean {
    if (this.videoSourceSsrc === 0 || !this.sendRtcp(buildPli(this.ownSsrc, this.videoSourceSsrc)))
      return false;
    this.stats.keyframeRequests++;
    return true;
  }

  /**
   * RTCP goes out on the audio track, the one we may send on (libdatachannel sends nothing but its own
   * handlers' RTCP on a recvonly track). The transport is bundled, and the sender routes RTCP feedback
   * to the track that owns the SSRC it names, so a PLI about the video reaches the video.
   */
  private sendRtcp(packet: Buffer): boolean {
    if (this.closed) return false;
    try {
      return this.audioTrack.sendMessageBinary(packet);
    } catch {
      return false; // not open (yet, or any more)
    }
  }

  /** The peer's connection state (libdatachannel's names). */
  get state(): string {
    return this.pc.state();
  }

  /** Ends the viewer: WHEP DELETE (unless `silently`, as a viewer that vanishes would), then the peer. */
  async close(options: { silently?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.reportTimer);
    if (!options.silently) await this.end?.().catch(() => {});
    closePeerConnection(this.pc);
  }
}
