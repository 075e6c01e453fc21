import type { Bus, Subscription } from "@avatar/bus";
import { type SessionConfig, SessionMode } from "@avatar/contracts/common";
import {
  type ClientFrame,
  ConnectionKind,
  WhepRequestSchema,
  type WhepResponse,
  WhepResponseSchema,
  WhepStatus,
} from "@avatar/contracts/pipeline";
import {
  ConnectionState,
  type Session,
  SessionEndReason,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import { endReasonFromProto, type Logger, realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { withoutMedia } from "../media/no-media.js";
import type { SessionMedia, SessionMediaFactory } from "../media/session-media.js";
import type { PipelineSettings } from "../settings.js";
import { ActivityReporter } from "./activity.js";
import { BatchWriter } from "./batch-writer.js";
import { type Clock, Timer } from "./clock.js";
import { Connections } from "./connections.js";
import { readEnvelope } from "./envelope.js";
import { readClientFrame, ServerFrames, serverEventJson } from "./frames.js";
import type { ModeFactory, ModeHandler, SessionContext } from "./mode.js";
import { type StoredEvent, sessionContext } from "./session-context.js";
import { type Outcome, SessionReports } from "./session-reports.js";
import { TranscriptWriter } from "./transcript-writer.js";

export type RunnerSettings = Pick<
  PipelineSettings,
  | "PIPELINE_CONNECT_GRACE_MS"
  | "PIPELINE_DISCONNECT_GRACE_MS"
  | "PIPELINE_CONNECTION_TIMEOUT_MS"
  | "PIPELINE_ACTIVITY_REPORT_MS"
  | "PIPELINE_START_WAIT_MS"
>;

export interface RunnerDeps {
  bus: Bus;
  sessions: Client<typeof SessionsService>;
  log: Logger;
  settings: RunnerSettings;
  clock: Clock;
  workerId: string;
  /** The mode handler of a session of this configuration. */
  modeFor(config: SessionConfig): ModeFactory;
  /** The session's media (the rendered avatar and its viewers). */
  media: SessionMediaFactory;
  /** The runner is done (ended, or the session turned out not to be this worker's). */
  onFinished(sessionId: string): void;
}

/**
 * pending: assigned, waiting for the start to complete (frames are kept); running: the mode handles
 * events; finished: nothing more is sent.
 */
type Phase = "pending" | "running" | "finished";

const ACK = new Uint8Array(0);
const CONFIRM_RETRY_MS = 500;

/**
 * One session on this worker: the bridge between the client sockets (ClientFrames relayed by any
 * gateway on rt.<id>.in, ServerFrames back on rt.<id>.out) and the session's mode handler. It tracks
 * the sockets, validates every message envelope, handles the common events, reports activity and
 * connection state to the sessions service, ends the session when no client is there, and on the end
 * sends `session.stopped` and closes every socket.
 */
export class SessionRunner {
  readonly sessionId: string;
  private phase: Phase = "pending";
  private session: Session;
  private readonly log: Logger;
  private readonly subscription: Subscription;
  private readonly whepSubscription: Subscription;
  private media: SessionMedia | undefined;
  private readonly out: ServerFrames;
  private readonly connections = new Connections();
  private readonly activity: ActivityReporter;
  private readonly transcript: TranscriptWriter;
  private readonly events: BatchWriter<StoredEvent>;
  private readonly reports: SessionReports;
  private readonly graceTimer: Timer;
  private readonly sweepTimer: Timer;
  private readonly confirmTimer: Timer;
  private readonly assignedAt: number;
  private startedAt: number;
  /** Frames that arrived before the mode was ready, in order. */
  private backlog: ClientFrame[] | undefined = [];
  private mode: ModeHandler | undefined;
  private context: SessionContext | undefined;
  private confirming: Promise<void> | undefined;
  private ending: Promise<void> | undefined;

  constructor(
    private readonly deps: RunnerDeps,
    session: Session,
    private readonly config: SessionConfig,
  ) {
    this.session = session;
    this.sessionId = session.id;
    this.log = deps.log.child({ sessionId: session.id });
    const clock = deps.clock;
    this.assignedAt = clock.now();
    this.startedAt = this.assignedAt;
    this.out = new ServerFrames(deps.bus, session.id);
    this.activity = new ActivityReporter(clock, deps.settings.PIPELINE_ACTIVITY_REPORT_MS, () =>
      this.keepAlive(),
    );
    this.transcript = new TranscriptWriter(
      async (entries) => {
        await deps.sessions.appendTranscript({ sessionId: this.sessionId, entries });
      },
      clock,
      this.log,
    );
    this.events = new BatchWriter<StoredEvent>(
      async (events) => {
        await deps.sessions.appendSessionEvents({ sessionId: this.sessionId, events });
      },
      clock,
      this.log,
      "session events",
    );
    this.reports = new SessionReports(deps.sessions, () => this.session, clock, this.log);
    this.graceTimer = new Timer(clock);
    this.sweepTimer = new Timer(clock);
    this.confirmTimer = new Timer(clock);
    // Served rather than subscribed: a gateway asks with its OPENED frame, and no answer tells it that
    // nobody runs the session. Other frames are published and get no answer.
    this.subscription = deps.bus.serve(realtimeSubjects.clientFrames(session.id), (msg) => {
      this.receive(readClientFrame(msg.data));
      return ACK;
    });
    this.whepSubscription = deps.bus.serve(realtimeSubjects.whep(session.id), (msg) => this.whep(msg.data));
    this.confirmTimer.arm(CONFIRM_RETRY_MS, () => void this.confirm());
  }

  /** The session ended (its end event, or the sessions service said so). */
  ended(reason: SessionEndReason): Promise<void> {
    return this.finish(reason);
  }

  /** Ends the session on the sessions service for `reason`, then here. */
  end(reason: SessionEndReason): Promise<void> {
    if (this.phase === "finished") return Promise.resolve();
    this.ending ??= this.endRemotely(reason);
    return this.ending;
  }

  /** Checks the session against the sessions service: ended elsewhere, or not this worker's. */
  async reconcile(): Promise<void> {
    if (this.phase === "pending") return this.confirm();
    if (this.phase !== "running" || this.ending) return;
    const session = await this.reports.current();
    if (!session) return;
    if (session.state === SessionState.ENDED) await this.finish(session.endReason);
    else if (session.pipelineWorkerId !== this.deps.workerId) this.drop("the session runs elsewhere");
  }

  // ---- ownership: the start that assigned this worker must complete with this worker ----

  private confirm(): Promise<void> {
    this.confirming ??= this.checkStart()
      .catch((err: unknown) => {
        this.log.warn("could not read the session's state", { err });
        this.retryConfirm();
      })
      .finally(() => {
        this.confirming = undefined;
      });
    return this.confirming;
  }

  private async checkStart(): Promise<void> {
    if (this.phase !== "pending") return;
    const session = await this.reports.current();
    if (!session || this.phase !== "pending") return;
    if (session.state === SessionState.ENDED) return this.finish(session.endReason);
    if (session.state !== SessionState.STARTED) return this.retryConfirm();
    // Two concurrent first starts may each have had a worker assigned; the one recorded runs it.
    if (session.pipelineWorkerId !== this.deps.workerId) return this.drop("another worker runs the session");
    await this.begin(session);
  }

  private retryConfirm(): void {
    if (this.phase !== "pending") return;
    if (this.deps.clock.now() - this.assignedAt > this.deps.settings.PIPELINE_START_WAIT_MS) {
      this.drop("the session did not start");
      return;
    }
    this.confirmTimer.arm(CONFIRM_RETRY_MS, () => void this.confirm());
  }

  private async begin(session: Session): Promise<void> {
    this.phase = "running";
    this.confirmTimer.clear();
    this.session = session;
    if (session.startedAt) this.startedAt = timestampMs(session.startedAt);
    this.armConnectGrace();
    this.sweep();
    const media = await this.startMedia(session);
    this.media = media;
    if (this.phase !== "running") {
      await media.stop().catch(() => {});
      return;
    }
    this.context = sessionContext({
      session: () => this.session,
      config: this.config,
      log: this.log,
      avatar: media.output,
      clock: this.deps.clock,
      out: this.out,
      transcript: this.transcript,
      events: this.events,
      open: () => this.phase === "running",
      startedAt: () => this.startedAt,
      end: (reason) => this.end(reason),
    });
    try {
      this.mode = await this.deps.modeFor(this.config)(this.context);
    } catch (err) {
      this.log.error("the session's mode could not start", { err });
      await this.end(SessionEndReason.SERVER_ERROR);
      return;
    }
    if (this.phase !== "running") {
      await this.mode.stop().catch(() => {});
      return;
    }
    const backlog = this.backlog ?? [];
    this.backlog = undefined;
    for (const frame of backlog) this.process(frame);
  }

  /** The session's media; a session whose media cannot start still runs (its viewers hear why). */
  private async startMedia(session: Session): Promise<SessionMedia> {
    try {
      return await this.deps.media({
        session,
        config: this.config,
        log: this.log,
        clock: this.deps.clock,
        onFrame: (frame) => this.context?.turnMetrics.videoFrame(frame),
      });
    } catch (err) {
      this.log.error("the session's media could not start", { err });
      return withoutMedia("the avatar's media could not start for this session");
    }
  }

  /** A WHEP call relayed by a gateway: answered by the media while the session runs here. */
  private async whep(data: Uint8Array): Promise<Uint8Array> {
    const answer = (res: WhepResponse) => toBinary(WhepResponseSchema, res);
    // A viewer may come before any socket: its call confirms the start as a socket's first frame would.
    if (this.phase === "pending") await this.confirm();
    const media = this.media;
    if (this.phase !== "running" || !media) {
      const message = this.phase === "finished" ? "the session is over" : "the session is starting";
      return answer(create(WhepResponseSchema, { status: WhepStatus.UNAVAILABLE, message }));
    }
    try {
      return answer(await media.whep(fromBinary(WhepRequestSchema, data)));
    } catch (err) {
      this.log.warn("a WHEP call failed", { err });
      return answer(
        create(WhepResponseSchema, {
          status: WhepStatus.UNAVAILABLE,
          message: "the viewer could not be served",
        }),
      );
    }
  }

  /** Not this worker's session after all: let go without a word to the clients. */
  private drop(why: string): void {
    if (this.phase === "finished") return;
    this.log.info("releasing the session", { why });
    this.phase = "finished";
    this.stopTimers();
    void this.mode?.stop().catch(() => {});
    void this.media?.stop().catch(() => {});
    void this.subscription.unsubscribe();
    void this.whepSubscription.unsubscribe();
    this.deps.onFinished(this.sessionId);
  }

  // ---- frames ----

  private receive(frame: ClientFrame): void {
    if (this.phase === "finished") return;
    if (this.backlog) {
      this.backlog.push(frame);
      if (this.phase === "pending") void this.confirm();
      return;
    }
    this.process(frame);
  }

  private process(frame: ClientFrame): void {
    if (this.phase !== "running") return;
    const id = frame.connectionId;
    if (!id) return;
    switch (frame.connection) {
      case ConnectionKind.OPENED:
      case ConnectionKind.HEARTBEAT:
        this.seen(id);
        return;
      case ConnectionKind.CLOSED:
        this.closed(id);
        return;
    }
    if (frame.json) {
      this.seen(id);
      this.message(id, frame.json);
    }
  }

  private seen(id: string): void {
    const wasEmpty = this.connections.size === 0;
    const firstTime = !this.connections.hadAny;
    if (!this.connections.open(id, this.deps.clock.now())) return;
    this.graceTimer.clear();
    this.send({ type: "session.state_updated", state: "connected" }, id);
    if (wasEmpty) this.reportConnection(ConnectionState.CONNECTED);
    try {
      this.mode?.onConnected(id, firstTime);
    } catch (err) {
      this.log.error("mode failed on connect", { err });
    }
  }

  private closed(id: string): void {
    if (this.connections.close(id)) this.afterClose();
  }

  /** The last socket gone: the session is disconnected, and ends unless a client comes back in time. */
  private afterClose(): void {
    if (this.connections.size > 0) return;
    this.send({ type: "session.state_updated", state: "disconnected" });
    this.reportConnection(ConnectionState.DISCONNECTED);
    this.graceTimer.arm(this.deps.settings.PIPELINE_DISCONNECT_GRACE_MS, () => {
      this.log.info("no client came back in time");
      void this.end(SessionEndReason.USER_DISCONNECTED);
    });
  }

  private message(connectionId: string, json: string): void {
    const mode = this.mode;
    if (!mode || !this.context) return;
    const envelope = readEnvelope(json, {
      mode: this.config.mode === SessionMode.LITE ? "LITE" : "FULL",
      accepts: mode.accepts,
    });
    if (!envelope.ok) {
      this.context.sendError(envelope.errorType, envelope.message, envelope.eventId, connectionId);
      return;
    }
    if (envelope.type === "session.keep_alive") {
      this.activity.keepAlive();
      return;
    }
    this.activity.touch();
    try {
      mode.handle({
        type: envelope.type,
        eventId: envelope.eventId,
        payload: envelope.payload,
        connectionId,
      });
    } catch (err) {
      this.log.error("event handler failed", { type: envelope.type, err });
      this.context.sendError(
        "internal_error",
        `${envelope.type} could not be handled`,
        envelope.eventId,
        connectionId,
      );
    }
  }

  private send(event: { type: string; [field: string]: unknown }, connectionId?: string): void {
    if (this.phase === "running") this.out.send(serverEventJson(this.sessionId, event), connectionId);
  }

  // ---- timers ----

  private armConnectGrace(): void {
    if (this.connections.hadAny) return;
    this.graceTimer.arm(this.deps.settings.PIPELINE_CONNECT_GRACE_MS, () => {
      this.log.info("no client connected in time");
      void this.end(SessionEndReason.USER_DISCONNECTED);
    });
  }

  /** Sockets whose gateway went silent count as closed. */
  private sweep(): void {
    const timeout = this.deps.settings.PIPELINE_CONNECTION_TIMEOUT_MS;
    const gone = this.connections.expire(this.deps.clock.now(), timeout);
    if (gone.length > 0) {
      this.log.info("sockets timed out (their gateway went silent)", { connections: gone.length });
      this.afterClose();
    }
    this.sweepTimer.arm(Math.max(20, Math.floor(timeout / 3)), () => this.sweep());
  }

  private stopTimers(): void {
    this.graceTimer.clear();
    this.sweepTimer.clear();
    this.confirmTimer.clear();
    this.activity.stop();
  }

  // ---- the sessions service ----

  private keepAlive(): void {
    void this.reports.activity().then((o) => this.endedElsewhere(o));
  }

  private reportConnection(state: ConnectionState): void {
    void this.reports.connection(state).then((o) => this.endedElsewhere(o));
  }

  private endedElsewhere(outcome: Outcome): void {
    if (outcome.ended) void this.finish(outcome.reason);
  }

  private async endRemotely(reason: SessionEndReason): Promise<void> {
    // When the sessions service cannot be reached the session stays STARTED there; once this worker's
    // heartbeats stop listing it, the sessions service ends it (SERVER_ERROR) and billing stops.
    await this.finish((await this.reports.end(reason)) ?? reason);
  }

  /** The end: the mode stops, every client hears `session.stopped` and its socket closes (1000). */
  private async finish(reason: SessionEndReason): Promise<void> {
    if (this.phase === "finished") return;
    const wasRunning = this.phase === "running";
    this.phase = "finished";
    this.stopTimers();
    await this.mode?.stop().catch((err: unknown) => this.log.warn("mode stop failed", { err }));
    await this.media?.stop().catch((err: unknown) => this.log.warn("media stop failed", { err }));
    const endReason = endReasonFromProto(reason) ?? "UNKNOWN";
    this.out.send(serverEventJson(this.sessionId, { type: "session.stopped", end_reason: endReason }));
    this.out.close(1000, "session ended");
    void this.subscription.unsubscribe();
    void this.whepSubscription.unsubscribe();
    if (wasRunning) this.log.info("session finished", { endReason });
    void this.transcript.idle();
    void this.events.idle();
    this.deps.onFinished(this.sessionId);
  }
}
