import {
  type WhepRequest,
  type WhepResponse,
  WhepResponseSchema,
  WhepStatus,
} from "@avatar/contracts/pipeline";
import {
  isWhepError,
  type MediaClock,
  MediaSession,
  type PhonemeMark,
  PortraitRenderer,
  type RtcSettings,
  type WhepErrorKind,
} from "@avatar/media";
import { streamSettings } from "@avatar/media/video-settings";
import { samplesFromBytes } from "@avatar/providers";
import { create } from "@bufbuild/protobuf";
import type { Clock } from "../realtime/clock.js";
import type { AvatarOutput } from "./avatar-output.js";
import type { LookSource } from "./look-source.js";
import { type RendererMetrics, rendererMetrics } from "./renderer-metrics.js";
import type { SessionMedia, SessionMediaContext } from "./session-media.js";
import { tappedFrames } from "./tapped-frames.js";
import type { TransportAPublication, TransportAPublishing } from "./transport-a.js";
import { WaitingVoice } from "./waiting-voice.js";

export interface AvatarMediaDeps {
  looks: LookSource;
  rtc: RtcSettings;
  ffmpegPath?: string;
  /** Where sessions with a transportA room publish. */
  transportA?: TransportAPublishing;
}

interface Live {
  renderer: PortraitRenderer;
  stream: MediaSession;
  metrics: RendererMetrics;
  room?: { publication: TransportAPublication | undefined; leave: AbortController };
}

const STATUS_OF: Record<WhepErrorKind, WhepStatus> = {
  bad_offer: WhepStatus.BAD_OFFER,
  too_many_viewers: WhepStatus.TOO_MANY_VIEWERS,
  unknown_viewer: WhepStatus.UNKNOWN_VIEWER,
};

/**
 * A session's avatar media on this worker. The voice the mode pushes plays out in real time whether or
 * not anyone watches; the portrait renderer and the encoders start with the first viewer (nothing is
 * drawn or encoded for a session nobody watches) and take over the voice from where it is playing. A
 * session with a transportA room is watched from its start: its frames are published there.
 */
export class AvatarMedia implements SessionMedia {
  readonly output: AvatarOutput;
  private readonly waiting: WaitingVoice;
  private live: Live | undefined;
  private starting: Promise<Live> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: SessionMediaContext,
    private readonly deps: AvatarMediaDeps,
  ) {
    this.waiting = new WaitingVoice(() => ctx.clock.now());
    this.output = {
      speak: (pcm, phonemes) => this.speak(pcm, phonemes),
      endUtterance: () => (this.live ? this.live.renderer.flush() : this.waiting.flush()),
      interrupt: () => {
        if (!this.live) return this.waiting.clear();
        this.live.renderer.clearBuffer();
        this.live.room?.publication?.clearAudio();
      },
    };
  }

  /** A session with a transportA destination publishes into its room from the start. */
  publishIfRoom(): void {
    const { session, config, log } = this.ctx;
    if (!this.deps.transportA?.destination(session, config)) return;
    this.goLive().catch((err: unknown) =>
      log.warn("the avatar's media could not start for its room", { err }),
    );
  }

  async whep(request: WhepRequest): Promise<WhepResponse> {
    const answer = (fields: {
      status?: WhepStatus;
      answerSdp?: string;
      viewerId?: string;
      message?: string;
    }) => create(WhepResponseSchema, { status: WhepStatus.OK, ...fields });
    try {
      switch (request.action.case) {
        case "offerSdp": {
          const live = await this.goLive();
          const viewer = await live.stream.addViewer(request.action.value);
          return answer({ answerSdp: viewer.answerSdp, viewerId: viewer.viewerId });
        }
        case "deleteViewerId":
          if (!this.live) return answer({ status: WhepStatus.UNKNOWN_VIEWER, message: "no such viewer" });
          this.live.stream.removeViewer(request.action.value);
          return answer({});
        default:
          return answer({ status: WhepStatus.BAD_OFFER, message: "no offer" });
      }
    } catch (err) {
      if (isWhepError(err)) return answer({ status: STATUS_OF[err.kind], message: err.message });
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const live = this.live ?? (await this.starting?.catch(() => undefined));
    this.live = undefined;
    if (!live) return;
    live.room?.leave.abort();
    await live.stream.close();
    live.metrics.encoderDropped(live.stream.stats.video.dropped);
    live.renderer.close();
    const report = await live.room?.publication?.done.catch(() => undefined);
    if (report) this.ctx.log.info("left the transportA room", { report });
  }

  private speak(pcm: Uint8Array, phonemes?: readonly PhonemeMark[]): void {
    if (this.live) {
      this.live.renderer.pushAudio(samplesFromBytes(pcm), phonemes ? { phonemes: [...phonemes] } : undefined);
    } else {
      this.waiting.push(pcm, phonemes);
    }
  }

  private goLive(): Promise<Live> {
    this.starting ??= this.start();
    return this.starting;
  }

  private async start(): Promise<Live> {
    const { session, config, clock } = this.ctx;
    const { look, lookKey } = await this.deps.looks.get(session.spaceId, config.avatarId);
    if (this.stopped) throw new Error("the session's media has stopped");
    const settings = streamSettings(config.videoSettings);
    const metrics = rendererMetrics(settings.quality);
    const renderer = await PortraitRenderer.create({
      look,
      lookKey,
      quality: settings.quality,
      orientation: settings.orientation,
      clock: mediaClockOf(clock),
      seed: session.id,
      observer: metrics,
    });
    // The voice that would be playing now goes on from where it is.
    for (const chunk of this.waiting.takeUnplayed()) {
      renderer.pushAudio(chunk.samples, chunk.phonemes ? { phonemes: chunk.phonemes } : undefined);
      if (chunk.last) renderer.flush();
    }
    const stream = new MediaSession({
      frames: renderer,
      video: { codec: settings.codec, width: renderer.width, height: renderer.height },
      rtc: this.deps.rtc,
      ...(this.deps.ffmpegPath ? { ffmpegPath: this.deps.ffmpegPath } : {}),
      now: () => clock.now(),
      onError: (err) => this.ctx.log.warn("the avatar's stream failed", { err }),
      onViewerGone: (viewerId, reason) => this.ctx.log.info("a viewer left", { viewerId, reason }),
    });
    const onFrame = this.ctx.onFrame;
    if (onFrame) stream.tap((frame) => onFrame(frame));
    this.live = { renderer, stream, metrics, ...(await this.joinRoom(stream)) };
    return this.live;
  }

  /** Publishes the frames into the session's transportA room, if it has one. */
  private async joinRoom(stream: MediaSession): Promise<Pick<Live, "room">> {
    const transportA = this.deps.transportA;
    const { session, config, log } = this.ctx;
    if (!transportA?.destination(session, config)) return {};
    const leave = new AbortController();
    const publication = await transportA
      .publish({
        session,
        config,
        frames: tappedFrames((listener) => stream.tap(listener), { signal: leave.signal }),
        signal: leave.signal,
        onState: (state) => {
          if (state.state === "failed")
            log.warn("the avatar could not publish into its transportA room", { state });
        },
      })
      .catch((err: unknown) => {
        log.warn("the avatar could not join its transportA room", { err });
        return undefined;
      });
    return { room: { publication, leave } };
  }
}

/** The session's realtime clock as the renderer paces frames by it. */
function mediaClockOf(clock: Clock): MediaClock {
  return {
    now: () => clock.now(),
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          cancel();
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const cancel = clock.after(ms, done);
        signal?.addEventListener("abort", done, { once: true });
      }),
  };
}
