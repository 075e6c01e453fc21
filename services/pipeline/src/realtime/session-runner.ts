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
  type TranscriptEntry,
} from "@avatar/contracts/sessions";
import { endReasonFromProto, type Logger, realtimeSubjects, type TurnPublisher } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { withoutMedia } from "../media/no-media.js";
import type { SessionMedia, SessionMediaFactory } from "../media/session-media.js";
import type { PipelineSettings } from "../settings.js";
import { ActivityReporter } from "./activity.js";
import { type Clock, Timer } from "./clock.js";
import { Connections } from "./connections.js";
import { readEnvelope } from "./envelope.js";
import { readClientFrame, ServerFrames, serverEventJson } from "./frames.js";
import { InboundOrder } from "./inbound-order.js";
import type { ModeFactory, ModeHandler, Resumption, SessionContext } from "./mode.js";
import { type StoredEvent, sessionContext } from "./session-context.js";
import type { SessionEventsWriter } from "./session-events-writer.js";
import { isNotOwner, SessionReports } from "./session-reports.js";
import { TranscriptWriter } from "./transcript-writer.js";

export type RunnerSettings = Pick<
  PipelineSettings,
  | "PIPELINE_CONNECT_GRACE_MS"
  | "PIPELINE_DISCONNECT_GRACE_MS"
  | "PIPELINE_CONNECTION_TIMEOUT_MS"
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
  /** Where the session's frames to its clients go (the worker's outbox, shared by its sessions). */
  outbox: Pick<TurnPublisher, "publish">;
  /** Where the session's stored events go (the worker's writer, shared by its sessions). */
  events: Pick<SessionEventsWriter, "forSession">;
  /** The runner is done (ended, lost, handed over, or the session turned out not to be this worker's). */
  onFinished(sessionId: string): void;
  /** Work that outlives the runner (an end reported late); a stopping worker waits for it. */
  track(work: Promise<void>): void;
}

export interface RunnerOptions {
  /** The session was running on another worker: resume it rather than start it. */
  takeover?: boolean;
}

/**
 * pending: assigned, waiting for the start (or takeover) to be recorded (frames are kept); running: the
 * mode handles events; finished: nothing more is sent.
 */
type Phase = "pending" | "running" | "finished";

const ACK = new Uint8Array(0);
const CONFIRM_RETRY_MS = 500;
/** Pages of transcript read to resume a session (1,000 entries each). */
const MAX_TRANSCRIPT_PAGES = 20;

/** What a client is told when its session moved to this worker, by mode. */
const RESUMED_MESSAGE = {
  FULL: "the session moved to another server and goes on; an answer in progress was cut short",
  LITE: "the session moved to another server and goes on; audio of an utterance in progress was lost, send it again",
};

/**
 * One session on this worker: the bridge between the client sockets (ClientFrames relayed by any
 * gateway on rt.<id>.in, ServerFrames back on rt.<id>.out) and the session's mode handler. It tracks
 * the sockets, takes each client message once and in order (inbound-order.ts), validates every message
 * envelope, handles the common events, reports activity and connection state to the sessions service,
 * ends the session when no client is there, and on the end sends `session.stopped` and closes every
 * socket.
 *
 * Ownership: the runner serves the session under the epoch the sessions service recorded for this worker
 * (every frame it sends carries it; gateways drop frames of an older epoch). When told it lost the
 * session (a heartbeat answer, or a refused call) it stops at once without a word to the clients: the
 * session goes on elsewhere. A runner created for a takeover resumes the session: the clients' sockets
 * carry on, FULL's conversation continues from the transcript, and each client hears that the session
 * moved. A stopping worker hands its sessions over (`handOver`).
 */
export class SessionRunner {
  readonly sessionId: string;
  private phase: Phase = "pending";
  private session: Session;
  private epochValue = 0;
  private releasing = false;
  /** The bus was down at the last sweep: the sockets' silence meant nothing. */
  private busWasDown = false;
  private readonly log: Logger;
  private readonly subscription: Subscription;
  private readonly whepSubscription: Subscription;
  private media: SessionMedia | undefined;
  private readonly out: ServerFrames;
  private readonly order: InboundOrder;
  private readonly connections = new Connections();
  private readonly activity: ActivityReporter;
  private readonly transcript: TranscriptWriter;
  private readonly events: { write(events: StoredEvent[]): void };
  private readonly reports: SessionReports;
  private readonly graceTimer: Timer;
  private readonly sweepTimer: Timer;
  private readonly confirmTimer: Timer;
  private readonly assignedAt: number;
  private readonly takeover: boolean;
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
    options: RunnerOptions = {},
  ) {
    this.session = session;
    this.sessionId = session.id;
    this.takeover = options.takeover ?? false;
    this.log = deps.log.child({ sessionId: session.id });
    const clock = deps.clock;
    this.assignedAt = clock.now();
    this.startedAt = this.assignedAt;
    this.order = new InboundOrder(clock, (id, seq, resend) => {
      if (this.phase === "running") this.out.ack(id, seq, resend);
    });
    this.out = new ServerFrames(deps.outbox, session.id, () => this.order.takeDue());
    this.activity = new ActivityReporter(clock, (at) => this.reports.activity(at));
    this.transcript = new TranscriptWriter(
      async (entries) => {
        try {
          await deps.sessions.appendTranscript({
            sessionId: this.sessionId,
            entries,
            pipelineEpoch: this.epochValue,
          });
        } catch (err) {
          if (!isNotOwner(err)) throw err;
          this.lost("the sessions service refused a transcript write of a former owner");
        }
      },
      clock,
      this.log,
    );
    this.events = deps.events.forSession(session.id);
    this.reports = new SessionReports(deps.sessions, () => this.session, clock, this.log, {
      ended: (reason) => void this.finish(reason),
      lost: () => this.lost("the sessions service refused a call of a former owner"),
    });
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

  /** The ownership epoch this runner serves under (0 until it runs). */
  get epoch(): number {
    return this.epochValue;
  }

  /** Whether the worker's heartbeat should hold the session's lease: running, and not being let go. */
  get serving(): boolean {
    return this.phase === "running" && !this.releasing && !this.ending;
  }

  /** Client activity for the worker's next heartbeat to carry (ms), if there was some since the last. */
  get pendingActivity(): number | undefined {
    return this.activity.pending;
  }

  /** The sessions service answered a heartbeat that carried the activity of `at`. */
  activityCarried(at: number): void {
    this.activity.carried(at);
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

  /** This worker does not own the session any more: stop at once, without a word to the clients. */
  lost(why: string): void {
    this.drop(`ownership lost: ${why}`);
  }

  /**
   * The sessions service no longer has the session under this worker: it ended (its clients hear
   * `session.stopped` from here, when the end event did not reach this worker) or moved (stop silently).
   */
  async notOwned(): Promise<void> {
    if (this.phase !== "running") return;
    this.releasing = true;
    const session = await this.reports.current().catch(() => undefined);
    this.releasing = false;
    if (session?.state === SessionState.ENDED) await this.finish(session.endReason);
    else this.lost("the sessions service no longer has it under this worker");
  }

  /**
   * The worker is stopping: hands the session to another worker. The mode stops first (nothing more is
   * said under this epoch), the transcript so far is written and the messages taken are acknowledged,
   * so the next owner starts where this one ended; then the sessions service offers the session to the
   * other workers. A session not running yet is let go.
   */
  async handOver(): Promise<void> {
    if (this.phase !== "running" || this.ending) {
      if (this.phase === "pending") this.drop("the worker is stopping");
      await this.ending;
      return;
    }
    this.releasing = true;
    await this.stopServing();
    this.order.flush();
    await this.transcript.idle();
    try {
      const { workerId } = await this.deps.sessions.releaseSession({
        sessionId: this.sessionId,
        workerId: this.deps.workerId,
        pipelineEpoch: this.epochValue,
      });
      this.log.info("session handed over", { to: workerId || "(waiting for a worker)" });
    } catch (err) {
      // Its lease runs out instead, and the session is offered to the other workers then.
      this.log.warn("could not hand the session over", { err });
    }
    this.release();
  }

  /**
   * The worker's periodic check: a start not yet recorded for this worker is checked again. A running
   * session is not asked about: every answered heartbeat checks it (its answer names the sessions ended
   * or moved, `notOwned`), and a call per session every round (1,000 calls every 30 s at 1,000 sessions)
   * said again what the heartbeats had said.
   */
  async reconcile(): Promise<void> {
    if (this.phase === "pending") return this.confirm();
  }

  // ---- ownership: the start (or takeover) that assigned this worker must be recorded for it ----

  /**
   * The start that assigned this worker was recorded: its `session.started` event, with the session as
   * recorded. The runner goes on as if it had asked (checkAssignment), without the call: a start costs
   * the sessions service one read and the pipeline one request fewer. A takeover has no such event, and
   * a runner already asking waits for its answer.
   */
  recorded(session: Session): Promise<void> {
    if (this.phase !== "pending" || this.takeover) return Promise.resolve();
    return this.confirm(() => Promise.resolve(session));
  }

  private confirm(read: () => Promise<Session | undefined> = () => this.reports.current()): Promise<void> {
    this.confirming ??= this.checkAssignment(read)
      .catch((err: unknown) => {
        this.log.warn("could not read the session's state", { err });
        this.retryConfirm();
      })
      .finally(() => {
        this.confirming = undefined;
      });
    return this.confirming;
  }

  private async checkAssignment(read: () => Promise<Session | undefined>): Promise<void> {
    if (this.phase !== "pending") return;
    const session = await read();
    if (!session || this.phase !== "pending") return;
    if (session.state === SessionState.ENDED) return this.finish(session.endReason);
    if (session.state !== SessionState.STARTED) return this.retryConfirm();
    // Two concurrent first starts (or offers of a takeover) may each have had a worker assigned; the one
    // recorded runs it. A takeover is recorded only after this worker's answer: wait for it.
    if (session.pipelineWorkerId !== this.deps.workerId) {
      if (this.takeover) return this.retryConfirm();
      return this.drop("another worker runs the session");
    }
    await this.begin(session);
  }

  private retryConfirm(): void {
    if (this.phase !== "pending") return;
    if (this.deps.clock.now() - this.assignedAt > this.deps.settings.PIPELINE_START_WAIT_MS) {
      this.drop(this.takeover ? "another worker took the session" : "the session did not start");
      return;
    }
    this.confirmTimer.arm(CONFIRM_RETRY_MS, () => void this.confirm());
  }

  private async begin(session: Session): Promise<void> {
    this.phase = "running";
    this.confirmTimer.clear();
    this.session = session;
    this.epochValue = session.pipelineEpoch;
    this.out.epoch = session.pipelineEpoch;
    this.reports.setEpoch(session.pipelineEpoch);
    if (session.startedAt) this.startedAt = timestampMs(session.startedAt);
    const resumed = this.takeover ? await this.resumption() : undefined;
    if (this.phase !== "running") return;
    if (resumed) {
      this.log.info("session taken over", { epoch: this.epochValue, entries: resumed.transcript.length });
      // Its clients were connected elsewhere: they come back (their gateways' next frames) or it ends.
      this.armDisconnectGrace();
    } else {
      this.armConnectGrace();
    }
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
      open: () => this.phase === "running" && !this.releasing,
      startedAt: () => this.startedAt,
      end: (reason) => this.end(reason),
      ...(resumed ? { resumed } : {}),
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
    if (resumed) {
      // Every socket of the session hears it at once (they are still open through their gateways).
      const mode = this.config.mode === SessionMode.LITE ? "LITE" : "FULL";
      this.send({ type: "warning", warning: { type: "session_resumed", message: RESUMED_MESSAGE[mode] } });
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
    if (this.phase !== "running" || this.releasing || !media) {
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

  /** The transcript so far, for a session taken over (empty when it cannot be read). */
  private async resumption(): Promise<Resumption> {
    const transcript: TranscriptEntry[] = [];
    let start: bigint | undefined;
    try {
      for (let page = 0; page < MAX_TRANSCRIPT_PAGES; page++) {
        const res = await this.deps.sessions.getTranscript({
          spaceId: this.session.spaceId,
          sessionId: this.sessionId,
          ...(start !== undefined ? { startTimestamp: start } : {}),
        });
        transcript.push(...res.entries);
        if (res.entries.length === 0 || !res.sessionActive || res.nextTimestamp === start) break;
        if (res.entries.length < 1000) break;
        start = res.nextTimestamp;
      }
    } catch (err) {
      this.log.warn("could not read the transcript of a session taken over", { err });
    }
    return { transcript };
  }

  /** Not this worker's session (any more): let go without a word to the clients. */
  private drop(why: string): void {
    if (this.phase === "finished") return;
    this.log.info("releasing the session", { why });
    this.phase = "finished";
    void this.stopServing();
    this.release();
  }

  /** Stops everything that serves the session here: the mode, its media, the timers, the reports. */
  private async stopServing(): Promise<void> {
    this.stopTimers();
    this.reports.stop();
    await this.mode?.stop().catch((err: unknown) => this.log.warn("mode stop failed", { err }));
    await this.media?.stop().catch((err: unknown) => this.log.warn("media stop failed", { err }));
  }

  /** The last step of every way out: no more frames taken; the worker forgets the runner. */
  private release(): void {
    this.phase = "finished";
    this.order.stop();
    void this.subscription.unsubscribe();
    void this.whepSubscription.unsubscribe();
    this.deps.onFinished(this.sessionId);
  }

  // ---- frames ----

  private receive(frame: ClientFrame): void {
    if (this.phase === "finished" || this.releasing) return;
    if (this.backlog) {
      this.backlog.push(frame);
      if (this.phase === "pending") void this.confirm();
      return;
    }
    this.process(frame);
  }

  private process(frame: ClientFrame): void {
    if (this.phase !== "running" || this.releasing) return;
    const id = frame.connectionId;
    if (!id) return;
    const seq = Number(frame.seq);
    const acked = Number(frame.ackedSeq);
    switch (frame.connection) {
      case ConnectionKind.OPENED:
      case ConnectionKind.HEARTBEAT:
        this.seen(id);
        this.order.socket(id, seq, acked);
        return;
      case ConnectionKind.CLOSED:
        this.order.forget(id);
        this.closed(id);
        return;
    }
    if (frame.json) {
      if (!this.order.message(id, seq, acked)) return;
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
    this.armDisconnectGrace();
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
    if (this.phase === "running" && !this.releasing) {
      this.out.send(serverEventJson(this.sessionId, event), connectionId);
    }
  }

  // ---- timers ----

  private armConnectGrace(): void {
    if (this.connections.hadAny) return;
    this.graceTimer.arm(this.deps.settings.PIPELINE_CONNECT_GRACE_MS, () => {
      this.log.info("no client connected in time");
      void this.end(SessionEndReason.USER_DISCONNECTED);
    });
  }

  private armDisconnectGrace(): void {
    this.graceTimer.arm(this.deps.settings.PIPELINE_DISCONNECT_GRACE_MS, () => {
      this.log.info("no client came back in time");
      void this.end(SessionEndReason.USER_DISCONNECTED);
    });
  }

  /**
   * Sockets whose gateway went silent count as closed; not while this worker's bus is down (no gateway
   * could be heard), and each gets a full timeout again when it is back.
   */
  private sweep(): void {
    const timeout = this.deps.settings.PIPELINE_CONNECTION_TIMEOUT_MS;
    this.sweepTimer.arm(Math.max(20, Math.floor(timeout / 3)), () => this.sweep());
    const now = this.deps.clock.now();
    if (this.deps.bus.status() !== "connected") {
      this.busWasDown = true;
      return;
    }
    if (this.busWasDown) {
      this.busWasDown = false;
      this.connections.refresh(now);
    }
    const gone = this.connections.expire(now, timeout);
    if (gone.length > 0) {
      this.log.info("sockets timed out (their gateway went silent)", { connections: gone.length });
      for (const id of gone) this.order.forget(id);
      this.afterClose();
    }
  }

  private stopTimers(): void {
    this.graceTimer.clear();
    this.sweepTimer.clear();
    this.confirmTimer.clear();
    this.activity.stop();
  }

  // ---- the sessions service ----

  private reportConnection(state: ConnectionState): void {
    this.reports.connection(state);
  }

  /**
   * Asks the sessions service to end the session. When it cannot be reached, the session ends here at
   * once (billing stops at this moment) and the end is reported until it arrives.
   */
  private async endRemotely(reason: SessionEndReason): Promise<void> {
    const at = this.deps.clock.now();
    const outcome = await this.reports.endOnce(reason, at);
    if (outcome.kind === "lost") return this.lost("the sessions service refused the end");
    if (outcome.kind === "ended") return this.finish(outcome.reason);
    this.deps.track(this.reports.endUntilDelivered(reason, at));
    await this.finish(reason);
  }

  /** The end: the mode stops, every client hears `session.stopped` and its socket closes (1000). */
  private async finish(reason: SessionEndReason): Promise<void> {
    if (this.phase === "finished") return;
    const wasRunning = this.phase === "running";
    this.phase = "finished";
    await this.stopServing();
    const endReason = endReasonFromProto(reason) ?? "UNKNOWN";
    this.out.send(serverEventJson(this.sessionId, { type: "session.stopped", end_reason: endReason }));
    this.out.close(1000, "session ended");
    if (wasRunning) this.log.info("session finished", { endReason });
    void this.transcript.idle();
    this.release();
  }
}
