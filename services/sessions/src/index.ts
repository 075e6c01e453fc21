import { SessionsService } from "@avatar/contracts/sessions";
import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { OutboxPublisher } from "@avatar/runtime";
import { type LifecycleDeps, SessionLifecycle } from "./lifecycle.js";
import { meterSessions } from "./metrics.js";
import { migrations } from "./migrations/index.js";
import { pipelineAssigner } from "./pipeline-assignment.js";
import { SessionScheduler } from "./scheduler.js";
import type { SessionsDatabase } from "./schema.js";
import { sessionsService } from "./service.js";
import { readSessionSettings } from "./settings.js";
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
}

/** Builds the sessions service: SessionsService over its tables, plus the timer loop and the outbox. */
export function build(deps: ServiceDeps<SessionsDatabase>, options: SessionsOptions = {}): SessionsApp {
  const settings = readSessionSettings(deps.env);
  const now = options.now ?? (() => new Date());
  const outbox = new OutboxPublisher(deps.db, deps.bus, deps.log);
  const beforeStartCompletes =
    options.beforeStartCompletes ??
    (settings.SESSIONS_REQUIRE_PIPELINE ? pipelineAssigner(deps.bus, settings, deps.log) : undefined);
  const lifecycle = new SessionLifecycle({
    db: deps.db,
    settings,
    outbox,
    now,
    ...(beforeStartCompletes ? { beforeStartCompletes } : {}),
  });
  const liveness = new WorkerLiveness({
    db: deps.db,
    bus: deps.bus,
    log: deps.log,
    timeoutMs: settings.PIPELINE_WORKER_TIMEOUT_MS,
    now,
  });
  const scheduler = new SessionScheduler({
    db: deps.db,
    lifecycle,
    outbox,
    log: deps.log,
    tickMs: settings.SESSIONS_TICK_MS,
    now,
  });
  const service = sessionsService({ db: deps.db, lifecycle, outbox, now });
  let unmeter: (() => void) | undefined;
  return {
    name: "sessions",
    lifecycle,
    liveness,
    scheduler,
    outbox,
    routes: (router) => router.service(SessionsService, service),
    start: async () => {
      outbox.meter("sessions");
      unmeter = meterSessions(deps.db);
      await liveness.start();
      if (!options.manualScheduler) scheduler.start();
    },
    stop: async () => {
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
  build: (deps) => build(deps),
};
