/**
 * One WHEP viewer's peer: answers its offer with sendonly video and audio in the session's codecs, then
 * carries the session's packets (already packetized once per session) with its own payload types and
 * sequence numbers, answers NACKs from its own history, passes keyframe requests on, and notices when
 * the viewer is gone without a DELETE.
 */
import ndc from "node-datachannel";
import type { VideoCodecName } from "../frames.js";
import { buildSenderReport, parseRtcp } from "../rtp/rtcp.js";
import { random32, writeRtpPacket } from "../rtp/rtp-packet.js";
import {
  closePeerConnection,
  createPeerConnection,
  gatheringComplete,
  type PeerConnection,
} from "./peer-connection.js";
import { advertisePublicIp, type RtcSettings } from "./rtc-settings.js";
import { chooseAudioCodec, chooseVideoCodec, type WhepOffer } from "./sdp-offer.js";
import { WhepError } from "./whep-errors.js";

export interface ViewerPeerOptions {
  id: string;
  offer: WhepOffer;
  codec: VideoCodecName;
  /** The session's SSRCs and CNAME (one media stream, shared by every viewer). */
  videoSsrc: number;
  audioSsrc: number;
  cname: string;
  settings: RtcSettings;
  onKeyframeRequest: () => void;
  /** Both tracks are open: media sent from now on reaches the viewer. */
  onConnected: () => void;
  onGone: (reason: "failed" | "closed" | "disconnected" | "never-connected" | "silent") => void;
  /** A viewer not connected this long after its answer is dropped. */
  connectTimeoutMs?: number;
  /** A disconnected viewer that does not come back within this is dropped. */
  disconnectGraceMs?: number;
  /**
   * A connected viewer that sends no RTCP for this long is gone (every WebRTC receiver reports every
   * second or so): a closed tab does not always say goodbye, and ICE alone notices late.
   */
  silenceMs?: number;
}

/** NACKed packets are resent from this many of the most recent ones per track. */
const NACK_HISTORY = 512;

class OutgoingTrack {
  sequence = random32() & 0xffff;
  packets = 0;
  octets = 0;

  constructor(
    readonly track: ndc.Track,
    readonly payloadType: number,
    readonly ssrc: number,
  ) {}

  send(payload: Uint8Array, timestamp: number, marker: boolean): void {
    const packet = writeRtpPacket(
      { payloadType: this.payloadType, sequenceNumber: this.sequence, timestamp, ssrc: this.ssrc, marker },
      payload,
    );
    this.sequence = (this.sequence + 1) & 0xffff;
    this.packets++;
    this.octets += payload.length;
    try {
      this.track.sendMessageBinary(packet);
    } catch {
      // the track closed under us; the peer's state change removes the viewer
    }
  }
}

export class ViewerPeer {
  private readonly pc: PeerConnection;
  private video!: OutgoingTrack;
  private audio!: OutgoingTrack;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  answerSdp = "";
  /** Set once the peer is connected and the tracks are open. */
  connected = false;

  private constructor(private readonly options: ViewerPeerOptions) {
    this.pc = createPeerConnection(`viewer-${options.id}`, options.settings);
  }

  static async answer(options: ViewerPeerOptions): Promise<ViewerPeer> {
    const videoCodec = chooseVideoCodec(options.offer.video, options.codec);
    const audioCodec = chooseAudioCodec(options.offer.audio);
    const peer = new ViewerPeer(options);
    try {
      await peer.negotiate(videoCodec, audioCodec);
      return peer;
    } catch (error) {
      peer.close();
      throw error;
    }
  }

  private async negotiate(
    videoCodec: ReturnType<typeof chooseVideoCodec>,
    audioCodec: ReturnType<typeof chooseAudioCodec>,
  ): Promise<void> {
    const { offer, codec, cname } = this.options;
    try {
      this.pc.setRemoteDescription(offer.sdp, "offer");
    } catch (error) {
      throw new WhepError("bad_offer", `the SDP offer was refused: ${(error as Error).message}`);
    }
    const video = new ndc.Video(offer.video.mid, "SendOnly");
    if (codec === "H264") video.addH264Codec(videoCodec.payloadType, videoCodec.fmtp);
    else video.addVP8Codec(videoCodec.payloadType);
    video.addSSRC(this.options.videoSsrc, cname, "avatar", "avatar-video");
    const audio = new ndc.Audio(offer.audio.mid, "SendOnly");
    audio.addOpusCodec(audioCodec.payloadType, audioCodec.fmtp);
    audio.addSSRC(this.options.audioSsrc, cname, "avatar", "avatar-voice");
    this.video = this.attach(this.pc.addTrack(video), videoCodec.payloadType, this.options.videoSsrc);
    this.audio = this.attach(this.pc.addTrack(audio), audioCodec.payloadType, this.options.audioSsrc);
    this.pc.onStateChange((state) => this.stateChanged(state));
    this.pc.setLocalDescription("answer");
    await gatheringComplete(this.pc, 5000);
    const local = this.pc.localDescription();
    if (!local) throw new Error("no local description after gathering");
    this.answerSdp = advertisePublicIp(local.sdp, this.options.settings.publicIp);
    this.watchSilence();
    this.timers.push(
      setTimeout(() => {
        if (!this.connected) this.gone("never-connected");
      }, this.options.connectTimeoutMs ?? 30_000),
    );
  }

  private attach(track: ndc.Track, payloadType: number, ssrc: number): OutgoingTrack {
    track.setMediaHandler(new ndc.RtcpNackResponder(NACK_HISTORY));
    track.onMessage((message) => {
      this.lastHeard = Date.now();
      for (const item of parseRtcp(message)) {
        if (item.type === "keyframe-request") this.options.onKeyframeRequest();
      }
    });
    track.onOpen(() => {
      if (!this.connected && this.video?.track.isOpen() && this.audio?.track.isOpen()) {
        this.connected = true;
        this.lastHeard = Date.now();
        this.options.onConnected();
      }
    });
    return new OutgoingTrack(track, payloadType, ssrc);
  }

  private disconnectTimer: NodeJS.Timeout | undefined;
  private lastHeard: number | undefined;

  private watchSilence(): void {
    const silenceMs = this.options.silenceMs ?? 15_000;
    const timer = setInterval(
      () => {
        if (this.lastHeard !== undefined && Date.now() - this.lastHeard > silenceMs) this.gone("silent");
      },
      Math.min(1000, silenceMs / 2),
    );
    timer.unref();
    this.timers.push(timer);
  }

  private stateChanged(state: string): void {
    if (this.closed) return;
    if (state === "failed" || state === "closed") {
      this.gone(state);
    } else if (state === "disconnected") {
      this.disconnectTimer ??= setTimeout(
        () => this.gone("disconnected"),
        this.options.disconnectGraceMs ?? 10_000,
      );
    } else if (state === "connected" && this.disconnectTimer) {
      clearTimeout(this.disconnectTimer);
      this.disconnectTimer = undefined;
    }
  }

  private gone(reason: Parameters<ViewerPeerOptions["onGone"]>[0]): void {
    if (this.closed) return;
    this.close();
    this.options.onGone(reason);
  }

  /** One video frame's payloads (already packetized), all at `timestamp`, the marker on the last. */
  sendVideo(payloads: readonly Uint8Array[], timestamp: number): void {
    if (!this.connected || this.closed) return;
    payloads.forEach((p, i) => {
      this.video.send(p, timestamp, i === payloads.length - 1);
    });
  }

  sendAudio(payload: Uint8Array, timestamp: number): void {
    if (!this.connected || this.closed) return;
    this.audio.send(payload, timestamp, false);
  }

  /** Sender reports of both tracks for one instant of the session's media clock. */
  sendSenderReports(ntpMs: number, videoTimestamp: number, audioTimestamp: number): void {
    if (!this.connected || this.closed) return;
    for (const [track, rtpTimestamp] of [
      [this.video, videoTimestamp],
      [this.audio, audioTimestamp],
    ] as const) {
      try {
        track.track.sendMessageBinary(
          buildSenderReport({
            ssrc: track.ssrc,
            ntpMs,
            rtpTimestamp,
            packets: track.packets,
            octets: track.octets,
          }),
        );
      } catch {
        // closed under us
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connected = false;
    for (const t of this.timers) clearTimeout(t); // clears intervals too
    if (this.disconnectTimer) clearTimeout(this.disconnectTimer);
    closePeerConnection(this.pc);
  }
}
