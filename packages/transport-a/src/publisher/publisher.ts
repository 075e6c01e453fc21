import type { AvFrame, VideoCodecName } from "@avatar/media";
import { VIDEO_FPS } from "@avatar/media";
import type { Logger } from "@avatar/runtime";
import {
  AudioSource,
  DisconnectReason,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
  VideoSource,
} from "@livekit/rtc-node";
import { audioFrameOf, maxVideoBitrate, videoCodecOf, videoFrameOf } from "./rtc-frames.js";

export interface PublisherOptions {
  /** The transportA server (ws, wss, http or https). */
  url: string;
  /** A token that lets its holder join the room and publish camera and microphone. */
  token: string;
  /** The session's frames, paced in real time (the renderer's `frames()`). */
  frames: AsyncIterable<AvFrame>;
  codec: VideoCodecName;
  log: Logger;
  /** Stops publishing and leaves the room. */
  signal?: AbortSignal;
  /** Joining attempts before giving up, each failure waiting twice as long as the one before. */
  joinAttempts?: number;
  retryDelayMs?: number;
  /** What happens to the publication, for the session's `warning` events and tests. */
  onState?: (state: PublisherState) => void;
}

export type PublisherState =
  | { state: "joining"; attempt: number }
  | { state: "publishing"; room: string }
  | { state: "left"; reason: string }
  | { state: "failed"; error: string };

export interface PublishReport {
  /** Frames that reached the room's tracks. */
  published: number;
  /** Frames that went by while not in the room (joining, rejoining or given up). */
  dropped: number;
  /** The last failure to join, if the publisher never got in or gave up. */
  failure?: string;
}

/** Voice the audio source may hold ahead of playout; bounds how far the voice can trail the video. */
const AUDIO_QUEUE_MS = 100;

/** Reasons after which rejoining is pointless: the room or this participant was closed on purpose. */
const FINAL_REASONS = new Set<DisconnectReason>([
  DisconnectReason.CLIENT_INITIATED,
  DisconnectReason.ROOM_DELETED,
  DisconnectReason.PARTICIPANT_REMOVED,
  DisconnectReason.DUPLICATE_IDENTITY,
]);

interface Media {
  room: Room;
  video: VideoSource;
  audio: AudioSource;
  videoTrack: LocalVideoTrack;
  audioTrack: LocalAudioTrack;
}

/**
 * Publishes the avatar into a transportA room as one participant with two tracks, its video (camera,
 * `codec`, no simulcast) and its voice (microphone, 48 kHz mono, Opus on the wire). It consumes the
 * frame stream from start to end: frames that arrive while it is not in the room (joining, or after
 * losing the room) are dropped, never queued, so the room always shows the avatar as it is now and a
 * slow join never holds up the renderer. A failed join is retried a few times; a room that closed on
 * purpose (deleted at the session's end, participant removed) is not rejoined.
 */
export class TransportAPublisher {
  private media: Media | undefined;
  private joining: Promise<void> | undefined;
  private attemptsLeft: number;
  private final = false;
  private stopped = false;
  /** Ends a pause between join attempts when the run ends. */
  private readonly halt = new AbortController();
  private failure: string | undefined;
  private readonly report: PublishReport = { published: 0, dropped: 0 };

  constructor(private readonly options: PublisherOptions) {
    this.attemptsLeft = options.joinAttempts ?? 5;
  }

  /** Runs until the frames end or the signal aborts; then leaves the room. */
  async run(): Promise<PublishReport> {
    const { signal } = this.options;
    try {
      for await (const frame of this.options.frames) {
        if (signal?.aborted) break;
        await this.take(frame);
      }
    } finally {
      this.stopped = true;
      this.halt.abort();
      await this.joining?.catch(() => {});
      await this.leave();
    }
    return this.failure ? { ...this.report, failure: this.failure } : { ...this.report };
  }

  /** Interrupt: voice already handed to the room's audio source and not yet played is dropped. */
  clearAudio(): void {
    this.media?.audio.clearQueue();
  }

  private async take(frame: AvFrame): Promise<void> {
    const media = this.media;
    if (!media) {
      this.report.dropped++;
      if (!this.joining && !this.final && this.attemptsLeft > 0) {
        this.joining = this.join(frame.video.width, frame.video.height).finally(() => {
          this.joining = undefined;
        });
      }
      return;
    }
    try {
      media.video.captureFrame(videoFrameOf(frame));
      // Waits while the source holds AUDIO_QUEUE_MS of voice: the video waits with it, keeping sync.
      await media.audio.captureFrame(audioFrameOf(frame));
      this.report.published++;
    } catch (err) {
      if (this.media !== media) return; // the room went away under this frame
      throw err;
    }
  }

  private async join(width: number, height: number): Promise<void> {
    const { log, onState } = this.options;
    let delay = this.options.retryDelayMs ?? 500;
    while (this.attemptsLeft > 0 && !this.stopped && !this.options.signal?.aborted) {
      this.attemptsLeft--;
      const attempt = (this.options.joinAttempts ?? 5) - this.attemptsLeft;
      onState?.({ state: "joining", attempt });
      try {
        const media = await this.connect(width, height);
        if (this.stopped || this.options.signal?.aborted) {
          await closeMedia(media);
          return;
        }
        this.media = media;
        this.failure = undefined;
        const room = media.room.name ?? "";
        log.info("publishing the avatar into the transportA room", { room });
        onState?.({ state: "publishing", room });
        return;
      } catch (err) {
        this.failure = err instanceof Error ? err.message : String(err);
        log.warn("could not join the transportA room", { attempt, error: this.failure });
        if (this.attemptsLeft > 0) await this.pause(delay);
        delay *= 2;
      }
    }
    if (this.failure && !this.stopped) onState?.({ state: "failed", error: this.failure });
  }

  private async connect(width: number, height: number): Promise<Media> {
    const room = new Room();
    let video: VideoSource | undefined;
    let audio: AudioSource | undefined;
    try {
      await room.connect(this.options.url, this.options.token, { autoSubscribe: false, dynacast: false });
      video = new VideoSource(width, height);
      audio = new AudioSource(48_000, 1, AUDIO_QUEUE_MS);
      const videoTrack = LocalVideoTrack.createVideoTrack("avatar-video", video);
      const audioTrack = LocalAudioTrack.createAudioTrack("avatar-voice", audio);
      const local = room.localParticipant;
      if (!local) throw new Error("joined the room without a local participant");
      await local.publishTrack(
        videoTrack,
        new TrackPublishOptions({
          source: TrackSource.SOURCE_CAMERA,
          videoCodec: videoCodecOf(this.options.codec),
          simulcast: false,
          videoEncoding: { maxBitrate: BigInt(maxVideoBitrate(width, height)), maxFramerate: VIDEO_FPS },
        }),
      );
      await local.publishTrack(
        audioTrack,
        new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: false }),
      );
      const media: Media = { room, video, audio, videoTrack, audioTrack };
      room.on(RoomEvent.Disconnected, (reason) => this.lost(media, reason));
      return media;
    } catch (err) {
      await video?.close().catch(() => {});
      await audio?.close().catch(() => {});
      await room.disconnect().catch(() => {});
      throw err;
    }
  }

  /** The room went away: drop frames from now on; rejoin on the next frame unless it was on purpose. */
  private lost(media: Media, reason: DisconnectReason): void {
    if (this.media !== media) return;
    this.media = undefined;
    const name = DisconnectReason[reason] ?? String(reason);
    this.final = FINAL_REASONS.has(reason);
    if (!this.final) this.attemptsLeft = Math.max(this.attemptsLeft, 1);
    this.options.log.info("left the transportA room", { reason: name, rejoin: !this.final });
    this.options.onState?.({ state: "left", reason: name });
    void closeMedia(media, false);
  }

  private async leave(): Promise<void> {
    const media = this.media;
    this.media = undefined;
    if (media) await closeMedia(media);
  }

  private pause(ms: number): Promise<void> {
    const signals = [this.halt.signal, this.options.signal].filter((x): x is AbortSignal => x !== undefined);
    if (signals.some((x) => x.aborted)) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        for (const x of signals) x.removeEventListener("abort", done);
        resolve();
      }
      for (const x of signals) x.addEventListener("abort", done, { once: true });
    });
  }
}

async function closeMedia(media: Media, disconnect = true): Promise<void> {
  if (disconnect) await media.room.disconnect().catch(() => {});
  await media.videoTrack.close().catch(() => {});
  await media.audioTrack.close().catch(() => {});
  await media.video.close().catch(() => {});
  await media.audio.close().catch(() => {});
}
