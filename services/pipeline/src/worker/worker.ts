import type { Bus, BusMessage, Subscription } from "@avatar/bus";
import type { SessionConfig } from "@avatar/contracts/common";
import {
  AssignSessionRequestSchema,
  AssignSessionResponseSchema,
  WorkerHeartbeatAckSchema,
  WorkerHeartbeatSchema,
} from "@avatar/contracts/pipeline";
import {
  SessionEndedSchema,
  SessionSchema,
  SessionStartedSchema,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import {
  isUuid,
  type Logger,
  pipelineAssignments,
  realtimeSubjects,
  TurnPublisher,
  topics,
} from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { SessionMediaFactory } from "../media/session-media.js";
import { type Clock, Timer } from "../realtime/clock.js";
import type { ModeFactory } from "../realtime/mode.js";
import { SessionEventsWriter } from "../realtime/session-events-writer.js";
import { SessionRunner } from "../realtime/session-runner.js";
import type { PipelineSettings } from "../settings.js";
import { peekNestedString } from "./peek-field.js";

export interface WorkerDeps {
  bus: Bus;
  sessions: Client<typeof SessionsService>;
  log: Logger;
  settings: PipelineSettings;
  clock: Clock;
  workerId: string;
  modeFor(config: SessionConfig): ModeFactory;
  media: SessionMediaFactory;
}

/**
 * One pipeline process: claims starting sessions (and running ones whose worker was lost) from the
 * workers' queue group while it has room, and runs a SessionRunner for each. Its heartbeat, a request the
 * sessions service answers, renews its lease on every session it serves under that session's ownership
 * epoch and carries each session's latest client activity (the idle timer); the answer names the sessions it lost (taken over elsewhere, or ended), which stop at once. When
 * the sessions service cannot be reached the worker keeps its sessions and reports again at the next
 * beat. A runner goes when its session ends (the end event, which plain subscribers of the durable
 * subject receive too; a missed event is caught by the next heartbeat's answer). On stop, it takes no more
 * sessions and hands the ones it runs to other workers: a rollout ends no session.
 */
export class PipelineWorker {
  readonly id: string;
  private readonly runners = new Map<string, SessionRunner>();
  /** Assignments accepted but whose runner is not created yet. */
  private reserved = 0;
  /** Work of finished runners still under way (ends reported late). */
  private readonly pending = new Set<Promise<void>>();
  private subscriptions: Subscription[] = [];
  private readonly heartbeatTimer: Timer;
  private readonly reconcileTimer: Timer;
  private stopping = false;
  /** The stored events of all its sessions, written together. */
  private readonly events: SessionEventsWriter;
  /** The frames all its sessions send their clients, published together once per turn. */
  private readonly outbox: TurnPublisher;

  constructor(private readonly deps: WorkerDeps) {
    this.id = deps.workerId;
    this.events = new SessionEventsWriter(deps.sessions, deps.clock, deps.log);
    this.outbox = new TurnPublisher(deps.bus, deps.log, { what: "server frames" });
    this.heartbeatTimer = new Timer(deps.clock);
    this.reconcileTimer = new Timer(deps.clock);
  }

  get sessionIds(): string[] {
    return [...this.runners.keys()];
  }

  runner(sessionId: string): SessionRunner | undefined {
    return this.runners.get(sessionId);
  }

  start(): void {
    const { bus } = this.deps;
    this.subscriptions = [
      bus.serve(realtimeSubjects.assign, (msg) => this.assign(msg), { queue: realtimeSubjects.workerQueue }),
      bus.subscribe(topics.sessionStarted.subject, (msg) => this.sessionStarted(msg)),
      bus.subscribe(topics.sessionEnded.subject, (msg) => this.sessionEnded(msg)),
    ];
    this.heartbeat();
    this.scheduleReconcile();
    this.deps.log.info("pipeline worker started", {
      workerId: this.id,
      capacity: this.deps.settings.PIPELINE_CAPACITY,
    });
  }

  /** Takes no more sessions, hands the ones it runs to other workers, then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    const [assign, ...rest] = this.subscriptions;
    await assign?.unsubscribe();
    const handing = Promise.all([
      ...[...this.runners.values()].map((r) => r.handOver()),
      ...this.pending,
    ]).then(() => this.events.flush());
    await Promise.race([
      handing,
      new Promise<void>((resolve) =>
        this.deps.clock.after(this.deps.settings.PIPELINE_DRAIN_TIMEOUT_MS, resolve),
      ),
    ]);
    this.heartbeatTimer.clear();
    this.reconcileTimer.clear();
    this.outbox.flush();
    for (const sub of rest) await sub.unsubscribe();
    this.subscriptions = [];
  }

  private async assign(msg: BusMessage): Promise<Uint8Array> {
    const answer = await this.claim(msg);
    const workerId = fromBinary(AssignSessionResponseSchema, answer).workerId;
    pipelineAssignments.inc({ outcome: workerId ? "claimed" : this.hasRoom() ? "refused" : "full" });
    return answer;
  }

  private hasRoom(): boolean {
    return !this.stopping && this.runners.size + this.reserved < this.deps.settings.PIPELINE_CAPACITY;
  }

  private async claim(msg: BusMessage): Promise<Uint8Array> {
    const request = fromBinary(AssignSessionRequestSchema, msg.data);
    const { sessionId, takeover } = request;
    if (!isUuid(sessionId)) return this.answer("");
    const existing = this.runners.get(sessionId);
    // The same start asked twice is answered again; a takeover replaces a runner this worker lost.
    if (existing && !takeover) return this.answer(this.id);
    existing?.lost("the session is being taken over");
    if (!this.hasRoom()) return this.answer("");
    this.reserved++;
    try {
      // The request carries them (an older sessions service's does not: then they are asked for).
      const { session, config } =
        request.session && request.config
          ? request
          : await this.deps.sessions.getSessionConfig({ sessionId });
      if (!session || !config || session.state === SessionState.ENDED || this.stopping)
        return this.answer("");
      if (!this.runners.has(sessionId)) {
        // The runner listens for the session's frames before the start (or takeover) is recorded, so
        // none is missed.
        const runner = new SessionRunner(this.runnerDeps(), session, config, { takeover });
        this.runners.set(sessionId, runner);
      }
      return this.answer(this.id);
    } catch (err) {
      this.deps.log.warn("could not take a session", { sessionId, err });
      return this.answer("");
    } finally {
      this.reserved--;
    }
  }

  private answer(workerId: string): Uint8Array {
    return toBinary(AssignSessionResponseSchema, create(AssignSessionResponseSchema, { workerId }));
  }

  private runnerDeps() {
    const d = this.deps;
    return {
      bus: d.bus,
      sessions: d.sessions,
      log: d.log,
      settings: d.settings,
      clock: d.clock,
      workerId: this.id,
      modeFor: d.modeFor,
      media: d.media,
      events: this.events,
      outbox: this.outbox,
      onFinished: (sessionId: string) => {
        this.runners.delete(sessionId);
      },
      track: (work: Promise<void>) => {
        this.pending.add(work);
        void work.finally(() => this.pending.delete(work));
      },
    };
  }

  /** A start was recorded: the runner it assigned here goes on without asking (SessionRunner.recorded). */
  private async sessionStarted(msg: BusMessage): Promise<void> {
    if (!this.runsSessionOf(msg.data, SessionStartedSchema.field.session.number)) return;
    const { session } = fromBinary(SessionStartedSchema, msg.data);
    const runner = session ? this.runners.get(session.id) : undefined;
    if (session && runner) await runner.recorded(session);
  }

  private async sessionEnded(msg: BusMessage): Promise<void> {
    if (!this.runsSessionOf(msg.data, SessionEndedSchema.field.session.number)) return;
    const { session } = fromBinary(SessionEndedSchema, msg.data);
    const runner = session ? this.runners.get(session.id) : undefined;
    if (session && runner) await runner.ended(session.endReason);
  }

  /**
   * Whether a session event's session runs here, from its id read off the wire: every worker hears every
   * start and end, and decodes only those of its own sessions. The runner is then found by the decoded id.
   */
  private runsSessionOf(event: Uint8Array, sessionField: number): boolean {
    const id = peekNestedString(event, sessionField, SessionSchema.field.id.number)?.value;
    return id !== undefined && this.runners.has(id);
  }

  private heartbeat(): void {
    const serving = [...this.runners.values()].filter((r) => r.serving);
    const worker = {
      id: this.id,
      sessionIds: this.sessionIds,
      capacity: this.deps.settings.PIPELINE_CAPACITY,
      lastHeartbeatAt: timestampFromMs(this.deps.clock.now()),
    };
    const carried = serving.map((r) => r.pendingActivity);
    const leases = serving.map((r, i) => {
      const at = carried[i];
      return {
        sessionId: r.sessionId,
        epoch: r.epoch,
        ...(at === undefined ? {} : { activityAt: timestampFromMs(at) }),
      };
    });
    const hb = toBinary(WorkerHeartbeatSchema, create(WorkerHeartbeatSchema, { worker, leases }));
    void this.beat(hb, serving, carried);
    this.heartbeatTimer.arm(this.deps.settings.PIPELINE_HEARTBEAT_MS, () => this.heartbeat());
  }

  /**
   * Sends one heartbeat; the runners it names as lost stop. Unanswered: the sessions stay, and wait, and
   * their activity rides the next one.
   */
  private async beat(
    hb: Uint8Array,
    listed: SessionRunner[],
    carried: (number | undefined)[],
  ): Promise<void> {
    let reply: Uint8Array;
    try {
      reply = await this.deps.bus.request(realtimeSubjects.heartbeat, hb, {
        timeoutMs: this.deps.settings.PIPELINE_HEARTBEAT_MS,
      });
    } catch (err) {
      this.deps.log.warn("heartbeat not answered; keeping the sessions", { err });
      return;
    }
    const lost = new Set(fromBinary(WorkerHeartbeatAckSchema, reply).lostSessionIds);
    listed.forEach((runner, i) => {
      const at = carried[i];
      if (at !== undefined) runner.activityCarried(at);
    });
    for (const runner of listed) {
      if (lost.has(runner.sessionId) && this.runners.get(runner.sessionId) === runner) {
        void runner.notOwned();
      }
    }
  }

  private scheduleReconcile(): void {
    this.reconcileTimer.arm(this.deps.settings.PIPELINE_RECONCILE_MS, () => {
      void this.reconcile().finally(() => {
        if (!this.stopping) this.scheduleReconcile();
      });
    });
  }

  private async reconcile(): Promise<void> {
    for (const runner of [...this.runners.values()]) {
      if (this.stopping) return;
      await runner.reconcile().catch((err: unknown) => this.deps.log.warn("reconcile failed", { err }));
    }
  }
}
