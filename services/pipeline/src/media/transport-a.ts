import type { SessionConfig } from "@avatar/contracts/common";
import type { Session } from "@avatar/contracts/sessions";
import type { AvFrame, VideoCodecName } from "@avatar/media";
import { streamSettings } from "@avatar/media/video-settings";
import type { Env, Logger } from "@avatar/runtime";
import {
  readTransportAConfig,
  type TransportADestination,
  TransportAServer,
  transportADestination,
} from "@avatar/transport-a";
import type { PublisherState, PublishReport } from "@avatar/transport-a/publisher";

/** The avatar's token outlives the session's longest possible run by this much (a late rejoin). */
const TOKEN_GRACE_SECONDS = 60;

export interface PublishRequest {
  session: Session;
  config: SessionConfig;
  /** The session's frame stream (the renderer's `frames()`), consumed to its end. */
  frames: AsyncIterable<AvFrame>;
  /** The video codec; by default the one the session's video_settings ask for. */
  codec?: VideoCodecName;
  /** Aborting it leaves the room (the session ended). */
  signal?: AbortSignal;
  /** What happens to the publication: joining, publishing, left, failed. */
  onState?: (state: PublisherState) => void;
}

export interface TransportAPublication {
  destination: TransportADestination;
  /** Settles when the frames end or the signal aborts, with what was published and dropped. */
  done: Promise<PublishReport>;
  /** Interrupt: the voice handed to the room and not played yet is dropped. */
  clearAudio(): void;
}

/** The room and token the avatar joins with. */
export interface JoinTarget {
  url: string;
  token: string;
}

/**
 * The pipeline worker's side of transportA (contract section 7): for each session, where its media goes
 * (the session's room on the deployment's server, a LITE caller's own room, or nowhere) and a
 * publisher of its frames there. The deployment's server comes from TRANSPORT_A_*; the worker mints
 * its own avatar token for a session room with them.
 */
export class TransportAPublishing {
  private loaded: Promise<typeof import("@avatar/transport-a/publisher")> | undefined;
  private release: (() => Promise<void>) | undefined;

  constructor(
    private readonly server: TransportAServer | undefined,
    private readonly log: Logger,
  ) {}

  static fromEnv(env: Env, log: Logger, now: () => number): TransportAPublishing {
    const config = readTransportAConfig(env);
    const server = config ? new TransportAServer(config, { now: () => new Date(now()) }) : undefined;
    return new TransportAPublishing(server, log);
  }

  destination(session: Session, config: SessionConfig): TransportADestination | undefined {
    return transportADestination(session.id, config, this.server !== undefined);
  }

  /** The URL and token the avatar joins its destination with. */
  async target(destination: TransportADestination, session: Session): Promise<JoinTarget> {
    if (destination.kind === "caller-room") return { url: destination.url, token: destination.token };
    const server = this.server;
    if (!server) throw new Error("a session room without a transportA server");
    const token = await server.avatarToken(destination.room, {
      lite: destination.lite,
      ttlSeconds: session.maxSessionDuration + TOKEN_GRACE_SECONDS,
    });
    return { url: server.config.url, token };
  }

  /**
   * Publishes the session's frames to its transportA destination until they end or the signal aborts;
   * undefined when the session has none (its media goes out over WHEP only). Never throws for a room
   * that cannot be joined: the publisher retries, then reports it (`onState` "failed", `done`).
   */
  async publish(request: PublishRequest): Promise<TransportAPublication | undefined> {
    const destination = this.destination(request.session, request.config);
    if (!destination) return undefined;
    const { url, token } = await this.target(destination, request.session);
    // Loaded on first use: the SDK's native library is only needed by a worker that publishes.
    this.loaded ??= import("@avatar/transport-a/publisher");
    const { TransportAPublisher, retainTransportA } = await this.loaded;
    this.release ??= retainTransportA();
    const publisher = new TransportAPublisher({
      url,
      token,
      frames: request.frames,
      codec: request.codec ?? streamSettings(request.config.videoSettings).codec,
      log: this.log.child({ sessionId: request.session.id, transportA: destination.kind }),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.onState ? { onState: request.onState } : {}),
    });
    return { destination, done: publisher.run(), clearAudio: () => publisher.clearAudio() };
  }

  /** Lets go of the SDK's native runtime (disposed by its last holder) once every session has stopped. */
  async close(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    await release?.();
  }
}
