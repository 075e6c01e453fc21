import { type Bus, connectNatsBus, createMemoryBus, withNamespace } from "@avatar/bus";
import type { Logger } from "./log.js";

export interface BusSettings {
  /** NATS server(s); the in-process bus when absent. */
  natsUrl?: string | undefined;
  /** Keeps deployments sharing one NATS server apart (subjects, consumers, buckets). */
  namespace?: string | undefined;
}

/** The bus of a process: NATS when a URL is configured, the in-process bus otherwise. */
export async function connectBus(settings: BusSettings, name: string, log: Logger): Promise<Bus> {
  if (!settings.natsUrl) return createMemoryBus({ logger: (level, msg, fields) => log[level](msg, fields) });
  const bus = await connectNatsBus({
    url: settings.natsUrl,
    name,
    logger: (level, msg, fields) => log[level](msg, fields),
  });
  return settings.namespace ? withNamespace(bus, settings.namespace) : bus;
}
