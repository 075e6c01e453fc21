import { hostname } from "node:os";
import { type SessionConfig, SessionMode } from "@avatar/contracts/common";
import { PipelineService } from "@avatar/contracts/pipeline";
import type { ServiceApp, ServiceBasics, StatelessServiceModule } from "@avatar/runtime";
import { createFullMode } from "./full/index.js";
import { liteMode } from "./lite/lite-mode.js";
import { avatarMediaFactory } from "./media/media-factory.js";
import type { SessionMediaFactory } from "./media/session-media.js";
import { TransportAPublishing } from "./media/transport-a.js";
import { meterWorker } from "./metrics/pipeline-metrics.js";
import { sessionProviders } from "./providers/registry.js";
import type { SessionProvidersFactory } from "./providers/session-providers.js";
import { type Clock, systemClock } from "./realtime/clock.js";
import type { ModeFactory } from "./realtime/mode.js";
import { pipelineService } from "./service.js";
import { readPipelineSettings } from "./settings.js";
import { WorkerRegistry } from "./worker/registry.js";
import { PipelineWorker } from "./worker/worker.js";

export {
  type PublishRequest,
  type TransportAPublication,
  TransportAPublishing,
} from "./media/transport-a.js";
export { type PipelineSettings, pipelineSettings } from "./settings.js";

export interface PipelineOptions {
  clock?: Clock;
  /** Replaces the providers chosen from the configuration and env (tests). */
  providers?: SessionProvidersFactory;
  /** Replaces the mode handlers (tests). */
  modes?: Partial<Record<"LITE" | "FULL", ModeFactory>>;
  /** Replaces the sessions' media (tests). */
  media?: SessionMediaFactory;
}

export interface PipelineApp extends ServiceApp {
  worker: PipelineWorker;
  registry: WorkerRegistry;
  /** Publishing sessions' media into transportA rooms (`publish` with a session's frame stream). */
  transportA: TransportAPublishing;
}

/**
 * The pipeline service: this process is one worker (sessions claimed from the workers' queue group,
 * LITE and FULL mode runners), plus the operators' RPCs about all workers from their heartbeats.
 */
export function build(deps: ServiceBasics, options: PipelineOptions = {}): PipelineApp {
  const settings = readPipelineSettings(deps.env);
  const clock = options.clock ?? systemClock;
  const workerId = settings.PIPELINE_WORKER_ID ?? `${hostname()}-${crypto.randomUUID().slice(0, 8)}`;
  const log = deps.log.child({ workerId });
  const providers = options.providers ?? sessionProviders({ clients: deps.clients, env: deps.env, log });
  const lite =
    options.modes?.LITE ??
    liteMode(providers, { maxBufferedMs: settings.PIPELINE_LITE_MAX_BUFFERED_MS }, clock);
  const full = options.modes?.FULL ?? createFullMode({ providers, clients: deps.clients, env: deps.env });
  const modeFor = (config: SessionConfig) => (config.mode === SessionMode.LITE ? lite : full);
  const transportA = TransportAPublishing.fromEnv(deps.env, log, () => clock.now());
  const worker = new PipelineWorker({
    bus: deps.bus,
    sessions: deps.clients.sessions,
    log,
    settings,
    clock,
    workerId,
    modeFor,
    media:
      options.media ??
      avatarMediaFactory({
        catalog: deps.clients.catalog,
        env: deps.env,
        log,
        mediaOn: settings.PIPELINE_MEDIA,
        transportA,
      }),
  });
  const registry = new WorkerRegistry(deps.bus, clock, settings.PIPELINE_HEARTBEAT_MS * 3);
  let unmeter: (() => void) | undefined;
  return {
    name: "pipeline",
    worker,
    registry,
    transportA,
    routes: (router) => router.service(PipelineService, pipelineService(registry)),
    start: async () => {
      registry.start();
      worker.start();
      unmeter = meterWorker({
        id: workerId,
        capacity: settings.PIPELINE_CAPACITY,
        running: () => worker.sessionIds.length,
      });
    },
    stop: async () => {
      unmeter?.();
      await worker.stop();
      await registry.stop();
      await transportA.close();
    },
  };
}

/** The pipeline keeps no data: its sessions' state is the sessions service's, its workers' the bus's. */
export const pipelineModule: StatelessServiceModule = {
  name: "pipeline",
  build: (deps) => build(deps),
};
