import type { Subscription } from "@avatar/bus";
import { SessionsService } from "@avatar/contracts/sessions";
import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { OutboxPublisher, standalone } from "@avatar/runtime";
import { readTransportAConfig, TransportAServer } from "@avatar/transport-a";
import { CreationBatch } from "./created-insert.js";
import { Judgment } from "./judgment.js";
import { type LifecycleDeps, SessionLifecycle } from "./lifecycle.js";
import { meterSessions } from "./metrics.js";
import { migrations } from "./migrations/index.js";
import { pipelineAssigner } from "./pipeline-assignment.js";
import { SessionScheduler } from "./scheduler.js";
import type { SessionRow, SessionsDatabase } from "./schema.js";
import { sessionsService } from "./service.js";
import { readSessionSettings } from "./settings.js";
import { SessionTakeover } from "./takeover.js";
import { SessionRooms } from "./transport-a-rooms.js";
import { WorkerLiveness } from "./worker-liveness.js";

export { creditRate } from "./ledger.js";
export type { StartPreparation } from "./lifecycle.js";
export type { SessionsDatabase } from "./schema.js";
export { type SessionSettings, sessionSettings } from "./settings.js";

export interface SessionsOptions {
  /** The clock (tests move it by hand). */
  now?: () => Date;
  /**
   * Replaces the step before a start completes; by default a pipeline worker is assigned over the bus
   * (unless SESSIONS_REQUIRE_PIPELINE is off).
   */
  beforeStartCompletes?: LifecycleDeps["beforeStartCompletes"];
  /** Leaves the timer loop off (tests drive `scheduler.runOnce()` themselves). */
  manualScheduler?: boolean;
}

export interface SessionsApp extends ServiceApp {
  lifecycle: SessionLifecycle;
  /** The session rooms on the deployment's transportA server, when TRANSPORT_A_* are set. */
  rooms: SessionRooms | undefined;
  liveness: WorkerLiveness;
  scheduler: SessionScheduler;
  outbox: OutboxPublisher;
  takeover: SessionTakeover;
  judgment: Judgment;
}

/** Builds the sessions service: SessionsService over its tables, plus the timer loop and the outbox. */
export function build(deps: ServiceDeps<SessionsDatabase>, options: SessionsOptions = {}): SessionsApp {
  const settings = readSessionSettings(deps.env);
  const now = options.now ?? (() => new Date());
  const outbox = new OutboxPublisher(deps.db, deps.bus, deps.log);
  const transportA = readTransportAConfig(deps.env);
  const rooms = transportA
    ? new SessionRooms(new TransportAServer(transportA, { now }), deps.db, deps.log, now)
    : undefined;
  // A session moving to another worker keeps its room: only a start opens one.
  const assign = pipelineAssigner(deps.bus, settings, deps.log, now);
  const startAssign =
    options.beforeStartCompletes ?? (settings.SESSIONS_REQUIRE_PIPELINE ? assign : undefined);
  // The room first: no worker is asked to run a session whose room could not be made.
  const beforeStartCompletes =
    rooms || startAssign
      ? async (row: SessionRow) => {
          await rooms?.open(row);
          return startAssign?.(row);
        }
      : undefined;
  const judgment = new Judgment({
    busStatus: () => deps.bus.status(),
    now,
    outageBoundMs: settings.SESSIONS_OUTAGE_BOUND_MS,
    graceMs: settings.SESSIONS_RECOVERY_GRACE_MS,
  });
  const onDatabase = (works: boolean) => (works ? judgment.databaseWorks() : judgment.databaseFailed());
  const lifecycle = new SessionLifecycle({
    db: deps.db,
    creations: new CreationBatch(standalone(deps.db), {
      maxInFlight: settings.SESSIONS_CREATION_INSERTS_IN_FLIGHT,
    }),
    settings,
    outbox,
    now,
    judge: () => judgment.judge(),
    ...(beforeStartCompletes ? { beforeStartCompletes } : {}),
  });
  const liveness = new WorkerLiveness({
    db: deps.db,
    bus: deps.bus,
    log: deps.log,
    timeoutMs: settings.PIPELINE_WORKER_TIMEOUT_MS,
    idleTimeoutMs: settings.SESSION_IDLE_TIMEOUT_MS,
    now,
    onDatabase,
  });
  const takeover = new SessionTakeover({ db: deps.db, lifecycle, assign, log: deps.log, now });
  const scheduler = new SessionScheduler({
    db: deps.db,
    lifecycle,
    outbox,
    log: deps.log,
    tickMs: settings.SESSIONS_TICK_MS,
    now,
    takeover,
    onDatabase,
  });
  const service = sessionsService({ db: deps.db, lifecycle, outbox, takeover, now, rooms, log: deps.log });
  let roomsConsumer: Subscription | undefined;
  let unmeter: (() => void) | undefined;
  return {
    name: "sessions",
    lifecycle,
    rooms,
    liveness,
    scheduler,
    outbox,
    takeover,
    judgment,
    routes: (router) => router.service(SessionsService, service),
    start: async () => {
      judgment.started();
      roomsConsumer = await rooms?.consume(deps.bus);
      outbox.meter("sessions");
      unmeter = meterSessions(deps.db);
      await liveness.start();
      if (!options.manualScheduler) scheduler.start();
    },
    stop: async () => {
      await roomsConsumer?.unsubscribe();
      unmeter?.();
      await liveness.stop();
      await scheduler.stop();
      await outbox.idle();
    },
  };
}

export const sessionsModule: ServiceModule<SessionsDatabase> = {
  name: "sessions",
  migrations,
  // Its lifecycle's unlocked statements and batched creations (lifecycle.ts, created-insert.ts).
  pipelinesStatements: true,
  build: (deps) => build(deps),
};
