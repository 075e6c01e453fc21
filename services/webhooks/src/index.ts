import type { Subscription } from "@avatar/bus";
import { WebhooksService } from "@avatar/contracts/webhooks";
import {
  createEgressFetch,
  type ServiceApp,
  type ServiceDeps,
  type ServiceModule,
  sampleInto,
  sealerFromEnv,
  webhookBacklog,
} from "@avatar/runtime";
import { consumeEvents } from "./consumers.js";
import { type Deliver, httpDeliver, webhookEgressPolicy } from "./deliver.js";
import { Dispatcher, pendingCount } from "./dispatcher.js";
import { migrations } from "./migrations/index.js";
import type { WebhooksDatabase } from "./schema.js";
import { webhooksService } from "./service.js";
import { readWebhooksSettings } from "./settings.js";
import { cachedSubscribers } from "./subscribers.js";
import { runTranscriptChecks } from "./transcript-checks.js";

export type { Deliver, DeliveryResult } from "./deliver.js";

export type { WebhooksDatabase } from "./schema.js";
export { type WebhooksSettings, webhooksSettings } from "./settings.js";
export { sign, signedHeaders, verify } from "./signature.js";

export interface WebhooksOptions {
  /** The clock (tests move it by hand). */
  now?: () => Date;
  /** Replaces the HTTP delivery (tests). */
  deliver?: Deliver;
  /** Leaves the dispatcher's timer off (tests call `dispatcher.runOnce()`). */
  manualDispatch?: boolean;
}

export interface WebhooksApp extends ServiceApp {
  dispatcher: Dispatcher;
}

/**
 * The webhooks service: a space's endpoints (WebhooksService), the consumers that turn session and
 * memory events into deliveries, and the dispatcher that sends them, signed, from its outbox.
 */
export function build(deps: ServiceDeps<WebhooksDatabase>, options: WebhooksOptions = {}): WebhooksApp {
  const settings = readWebhooksSettings(deps.env);
  const now = options.now ?? (() => new Date());
  const sealer = sealerFromEnv("webhooks", deps.env, deps.log);
  const deliver =
    options.deliver ??
    httpDeliver({
      fetch: createEgressFetch(webhookEgressPolicy(deps.env, settings.WEBHOOKS_ALLOW_LOOPBACK)),
      timeoutMs: settings.WEBHOOKS_TIMEOUT_MS,
    });
  const subscribers = cachedSubscribers(deps.db, deps.bus, () => now().getTime());
  const dispatcher = new Dispatcher({
    db: deps.db,
    deliver,
    sealer,
    subscribers,
    settings,
    now,
    log: deps.log,
    beforeDeliveries: () =>
      runTranscriptChecks({ db: deps.db, sessions: deps.clients.sessions, subscribers, now, log: deps.log }),
  });
  const service = webhooksService({
    db: deps.db,
    sealer,
    subscribers,
    now,
    maxEndpoints: settings.WEBHOOKS_MAX_ENDPOINTS,
  });
  let subscriptions: Subscription[] = [];
  let unmeter: (() => void) | undefined;
  return {
    name: "webhooks",
    dispatcher,
    routes: (router) => router.service(WebhooksService, service),
    start: async () => {
      if (settings.WEBHOOKS_ALLOW_LOOPBACK) deps.log.warn("webhooks may be delivered to loopback addresses");
      subscriptions = await consumeEvents({
        db: deps.db,
        bus: deps.bus,
        subscribers,
        now,
        settleMs: settings.WEBHOOKS_TRANSCRIPT_SETTLE_MS,
        kick: () => dispatcher.kick(),
      });
      unmeter = sampleInto(webhookBacklog, async () => [{ value: await pendingCount(deps.db) }]);
      if (!options.manualDispatch) dispatcher.start();
    },
    stop: async () => {
      unmeter?.();
      for (const s of subscriptions) await s.unsubscribe();
      await dispatcher.stop();
      await subscribers.close();
    },
  };
}

export const webhooksModule: ServiceModule<WebhooksDatabase> = {
  name: "webhooks",
  migrations,
  build: (deps) => build(deps),
};
