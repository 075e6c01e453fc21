import { SessionsService } from "@avatar/contracts/sessions";
import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { Judgment } from "./judgment.js";
import { type LifecycleDeps, SessionLifecycle } from "./lifecycle.js";
import { migrations } from "./migrations/index.js";
import { OutboxPublisher } from "./outbox.js";
import { pipelineAssigner } from "./pipeline-assignment.js";
import { SessionScheduler } from "./scheduler.js";
import type { SessionsDatabase } from "./schema.js";
import { sessionsService } from "./service.js";
import { readSessionSettings } from "./settings.js";
import { SessionTakeover } from "./takeover.js";
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
  const assign = pipelineAssigner(deps.bus, settings, deps.log);
  const beforeStartCompletes =
    options.beforeStartCompletes ?? (settings.SESSIONS_REQUIRE_PIPELINE ? assign : undefined);
  const judgment = new Judgment({
    busStatus: () => deps.bus.status(),
    now,
    outageBoundMs: settings.SESSIONS_OUTAGE_BOUND_MS,
    graceMs: settings.SESSIONS_RECOVERY_GRACE_MS,
  });
  const onDatabase = (works: boolean) => (works ? judgment.databaseWorks() : judgment.databaseFailed());
  const lifecycle = new SessionLifecycle({
    db: deps.db,
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
  const service = sessionsService({ db: deps.db, lifecycle, outbox, takeover, now });
  return {
    name: "sessions",
    lifecycle,
    liveness,
    scheduler,
    outbox,
    takeover,
    judgment,
    routes: (router) => router.service(SessionsService, service),
    start: async () => {
      judgment.started();
      await liveness.start();
      if (!options.manualScheduler) scheduler.start();
    },
    stop: async () => {
      await liveness.stop();
      await scheduler.stop();
      await outbox.idle();
    },
  };
}

export const sessionsModule: ServiceModule<SessionsDatabase> = {
  name: "sessions",
  migrations,
  build: (deps) => build(deps),
};
