import type { Subscription } from "@avatar/bus";
import { MemoryService } from "@avatar/contracts/memory";
import {
  createEgressFetch,
  OutboxPublisher,
  readEgressPolicy,
  readSecretDestinations,
  type ServiceApp,
  type ServiceDeps,
  type ServiceModule,
} from "@avatar/runtime";
import { readMemoryConfig } from "./config.js";
import { consumeSessionEnded } from "./consumer.js";
import type { MemoryContext } from "./context.js";
import { migrations } from "./migrations/index.js";
import type { MemoryDatabase } from "./schema.js";
import { memoryService } from "./service.js";
import { createSummarizer } from "./summarizer.js";

export type { MemoryConfig } from "./config.js";
export type { MemoryContext } from "./context.js";
export type { MemoryDatabase } from "./schema.js";

const OUTBOX_RETRY_MS = 5_000;

/**
 * Builds the memory service: MemoryService over its tables, and the consumer that adds a session's
 * episode when a session with a memory ends. Other services are reached lazily through deps.clients.
 */
export async function build(deps: ServiceDeps<MemoryDatabase>): Promise<ServiceApp> {
  const config = readMemoryConfig(deps.env);
  const outbox = new OutboxPublisher(deps.db, deps.bus, deps.log);
  const ctx: MemoryContext = {
    outbox,
    db: deps.db,
    log: deps.log,
    contentMaxChars: config.MEMORY_CONTENT_MAX_CHARS,
    sessions: {
      getSession: (req) => deps.clients.sessions.getSession(req),
      getTranscript: (req) => deps.clients.sessions.getTranscript(req),
    },
    summarizer: createSummarizer({
      log: deps.log,
      preferredLlmName: config.MEMORY_LLM_CONFIGURATION_NAME,
      llmTimeoutMs: config.MEMORY_LLM_TIMEOUT_MS,
      egress: createEgressFetch(readEgressPolicy(deps.env)),
      destinations: readSecretDestinations(deps.env),
      agents: {
        listLlmConfigurations: (req) => deps.clients.agents.listLlmConfigurations(req),
        revealSecret: (req) => deps.clients.agents.revealSecret(req),
      },
    }),
  };
  let subscription: Subscription | undefined;
  let kicker: NodeJS.Timeout | undefined;
  return {
    name: "memory",
    routes: (router) => router.service(MemoryService, memoryService(ctx)),
    start: async () => {
      subscription = await consumeSessionEnded(deps.bus, ctx);
      outbox.meter("memory");
      // Events whose first publish failed (the bus was away) go out with a later kick.
      kicker = setInterval(() => void outbox.kick(), OUTBOX_RETRY_MS);
      kicker.unref();
      void outbox.kick();
    },
    stop: async () => {
      clearInterval(kicker);
      await subscription?.unsubscribe();
      await outbox.idle();
    },
  };
}

export const memoryModule: ServiceModule<MemoryDatabase> = { name: "memory", migrations, build };
