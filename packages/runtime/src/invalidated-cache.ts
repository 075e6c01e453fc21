import type { Bus, Subscription } from "@avatar/bus";
import type { Logger } from "./log.js";

/**
 * Subjects on which a service says that a value others may cache has changed; the message is its id.
 * The owner of the data publishes, every process that caches it listens.
 */
export const cacheInvalidations = {
  /** The tokens service's spaces (tier, duration limit). */
  spaces: "cache.tokens.spaces",
  /** The catalog's avatars (status, flags, default voice). */
  avatars: "cache.catalog.avatars",
  /** The catalog's voices (what a FULL session speaks with). */
  voices: "cache.catalog.voices",
  /** The agents service's contexts (a FULL session's prompt and opening text, its required variables). */
  contexts: "cache.agents.contexts",
  /** The agents service's voice agents (what a session with `voice_agent` runs). */
  voiceAgents: "cache.agents.voice_agents",
  /** The agents service's LLM configurations (a FULL session's own model endpoint). */
  llmConfigurations: "cache.agents.llm_configurations",
  /** The agents service's secrets: their type only, never a value (a LITE agent's key is checked by it). */
  secrets: "cache.agents.secrets",
  /** The agents service's embeds (a visitor's session recipe, its limits, whether it is disabled). */
  embeds: "cache.agents.embeds",
  /** The webhooks service's endpoints of a space (which are enabled, their event types). */
  webhookEndpoints: "cache.webhooks.endpoints",
} as const;

const encoder = new TextEncoder();

/**
 * Tells every process that caches a value under `subject` that `keys` changed (one or many: an import of
 * many is one flush), and resolves once the bus has passed that on (Bus.flush). A writer in another
 * service than the caches awaits it before it answers, so that its caller's next request does not meet
 * the old value in a cache that was listening. It rejects when the bus could not confirm it (NATS
 * unreachable): the message may still arrive, and the caches' TTL bounds how long they keep the old
 * value otherwise.
 */
export async function publishInvalidation(
  bus: Bus,
  subject: string,
  keys: string | readonly string[],
): Promise<void> {
  const all = typeof keys === "string" ? [keys] : keys;
  if (all.length === 0) return;
  for (const key of all) bus.publish(subject, encoder.encode(key));
  await bus.flush();
}

/**
 * What a service that owns cached data calls after a write: `(ids) => ...` announces the change on
 * `subject` (one id, or the many of an import at once) and resolves once the bus has passed it on. It
 * never rejects: the write stands when the bus cannot confirm (NATS down), a warning naming the ids
 * (under `field`) is logged, and the caches' TTL bounds how long they keep the old value.
 */
export function changeAnnouncer(
  bus: Bus,
  log: Pick<Logger, "warn">,
  subject: string,
  field: string,
): (ids: string | readonly string[]) => Promise<void> {
  return (ids) =>
    publishInvalidation(bus, subject, ids).catch((err: unknown) => {
      log.warn("could not confirm that the caches heard of a change", { subject, [field]: ids, err });
    });
}

export interface InvalidatedCacheOptions {
  /** The longest an entry is trusted, should an invalidation be lost (the bus's publish is at most once). */
  ttlMs: number;
  maxEntries?: number;
  now?: () => number;
  /**
   * What an invalidation names, for keys that hold more than the id (e.g. `<avatar>|<space>`): every key
   * whose group is the invalidated id goes. The key itself by default.
   */
  groupOf?: (key: string) => string;
}

/**
 * What a service reads often and changes rarely, kept where it is read. Whoever changes a value calls
 * `invalidate(key)`: the entry goes at once here and, through a message on the bus, in every other
 * process that caches it. An entry also expires after `ttlMs`, so a lost message leaves it stale for at
 * most that long. Concurrent loads of one key share one load, and a load that an invalidation overtook
 * is answered but not kept. Absent values (undefined) are not cached.
 */
export class InvalidatedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  private subscription: Subscription | undefined;
  private readonly now: () => number;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly bus: Bus | undefined,
    /** The subject its invalidations travel on (`cache.<service>.<what>`). */
    private readonly subject: string,
    private readonly options: InvalidatedCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.subscription = bus?.subscribe(subject, (msg) => this.forget(this.decoder.decode(msg.data)));
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return entry.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    // An invalidation while loading takes the load out of `loading`: its value is answered, not kept.
    const loaded: Promise<V | undefined> = load().then(
      (value) => {
        const current = this.loading.get(key) === loaded;
        if (current) this.loading.delete(key);
        if (current && value !== undefined) this.store(key, value);
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }

  /** The value of `id` changed: drop it here and in every process that caches it. */
  invalidate(id: string): void {
    this.forget(id);
    // The other replicas of the writer: at most once, their TTL bounds a lost message.
    this.bus?.publish(this.subject, encoder.encode(id));
  }

  async close(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private forget(id: string): void {
    const groupOf = this.options.groupOf;
    if (!groupOf) {
      this.entries.delete(id);
      this.loading.delete(id);
      return;
    }
    for (const key of [...this.entries.keys()]) if (groupOf(key) === id) this.entries.delete(key);
    for (const key of [...this.loading.keys()]) if (groupOf(key) === id) this.loading.delete(key);
  }

  private store(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= (this.options.maxEntries ?? 10_000)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMs });
  }
}
