export * from "./bus.js";
export {
  DEAD_LETTER_FILTER,
  type DeadLetter,
  deadLetterHeaders,
  listDeadLetters,
  replayDeadLetter,
} from "./dead-letters.js";
export { DEFAULT_MAX_DELIVER, deadLetterSubject, retryDelayOf } from "./durable-settings.js";
export { isPromise } from "./in-flight.js";
export type { BusLogger, BusLogLevel } from "./logger.js";
export { createMemoryBus, type MemoryBusOptions } from "./memory.js";
export { connectNatsBus, DEFAULT_NATS_TIMEOUT_MS, type NatsBusOptions } from "./nats.js";

import type { Bus } from "./bus.js";
import type { BusLogger } from "./logger.js";
import { createMemoryBus } from "./memory.js";
import { connectNatsBus } from "./nats.js";

export interface BusFromEnvOptions {
  name?: string;
  logger?: BusLogger;
  timeoutMs?: number;
}

/** The NATS bus when `natsUrl` is a non-empty URL (typically process.env.NATS_URL), else the in-process bus. */
export async function createBusFromEnv(natsUrl?: string, options: BusFromEnvOptions = {}): Promise<Bus> {
  if (natsUrl?.trim()) return connectNatsBus({ url: natsUrl.trim(), ...options });
  return createMemoryBus({ logger: options.logger });
}
export { withNamespace } from "./namespace.js";
