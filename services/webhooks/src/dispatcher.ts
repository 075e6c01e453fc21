import type { Logger, Sealer } from "@avatar/runtime";
import { webhookDeliveries, webhookDeliveryDuration, webhookEndpointsDisabled } from "@avatar/runtime";
import { type Kysely, sql, type Transaction } from "kysely";
import { nextAttemptAt } from "./backoff.js";
import type { Deliver, DeliveryResult } from "./deliver.js";
import type { WebhooksDatabase } from "./schema.js";
import type { WebhooksSettings } from "./settings.js";
import { signedHeaders } from "./signature.js";
import type { Subscribers } from "./subscribers.js";

export interface DispatcherDeps {
  db: Kysely<WebhooksDatabase>;
  deliver: Deliver;
  sealer: Sealer;
  /** Told when the dispatcher disables an endpoint, once committed. */
  subscribers: Pick<Subscribers, "changed">;
  settings: Pick<
    WebhooksSettings,
    "WEBHOOKS_TICK_MS" | "WEBHOOKS_TIMEOUT_MS" | "WEBHOOKS_RETRY_FOR_MS" | "WEBHOOKS_DISABLE_AFTER_MS"
  >;
  now: () => Date;
  log: Logger;
  /** Work besides deliveries that each tick runs first (the transcript checks). */
  beforeDeliveries?: () => Promise<unknown>;
}

const BATCH = 20;

/**
 * Pending deliveries, said as the partial index deliveries_due says it: with the status a literal. The
 * plan Postgres keeps for a prepared statement knows no parameter's value, and with `status = $1` it read
 * every delivery ever made.
 */
const pending = (status: "status" | "d.status" = "status") => sql<boolean>`${sql.ref(status)} = 'pending'`;

/** How many deliveries wait (the backlog's gauge). */
export async function pendingCount(db: Kysely<WebhooksDatabase>): Promise<number> {
  const row = await db
    .selectFrom("deliveries")
    .select(sql<string>`count(*)`.as("n"))
    .where(pending())
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Up to `limit` pending deliveries due at `now` to enabled endpoints, locked (skipping those another
 * replica holds).
 */
export function dueDeliveries(trx: Transaction<WebhooksDatabase>, now: Date, limit: number) {
  return trx
    .selectFrom("deliveries as d")
    .innerJoin("endpoints as e", "e.id", "d.endpoint_id")
    .select("d.id")
    .where(pending("d.status"))
    .where("d.next_attempt_at", "<=", now)
    .where("e.disabled_at", "is", null)
    .orderBy("d.next_attempt_at")
    .limit(limit)
    .forUpdate("d")
    .skipLocked()
    .execute();
}

interface Claimed {
  id: string;
  endpoint_id: string;
  message_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret_sealed: string;
}

/**
 * Delivers the outbox: every replica runs one, each tick claiming due deliveries with a lease (so two
 * replicas never send the same attempt, and a replica that dies mid-attempt leaves it to be retried when
 * the lease runs out), sending them signed, and recording each attempt: delivered on 2xx; otherwise
 * again later (backoff.ts) until the retry period is over. An endpoint that has failed without a
 * single success for WEBHOOKS_DISABLE_AFTER_MS is disabled, with the reason on it.
 */
export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => {});
  }

  /** Look now (new deliveries arrived); concurrent calls share one run, plus one for late arrivals. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.runOnce().catch((err: unknown) => this.deps.log.warn("webhook dispatch failed", { err }));
  }

  /** One round: the checks, then every due delivery (in batches). Answers how many attempts were made. */
  runOnce(): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      let attempts = 0;
      try {
        do {
          this.again = false;
          await this.deps.beforeDeliveries?.();
          for (let n = await this.batch(); n > 0; n = await this.batch()) attempts += n;
        } while (this.again && !this.stopped);
      } finally {
        this.running = undefined;
      }
      return attempts;
    })();
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch((err: unknown) => this.deps.log.warn("webhook dispatch failed", { err }))
        .finally(() => this.schedule());
    }, this.deps.settings.WEBHOOKS_TICK_MS);
    this.timer.unref();
  }

  private async batch(): Promise<number> {
    if (this.stopped) return 0;
    const claimed = await this.claim();
    await Promise.all(claimed.map((d) => this.attempt(d)));
    return claimed.length;
  }

  /** Due deliveries of enabled endpoints, leased for longer than an attempt can take. */
  private async claim(): Promise<Claimed[]> {
    const now = this.deps.now();
    const lease = new Date(now.getTime() + this.deps.settings.WEBHOOKS_TIMEOUT_MS + 30_000);
    return this.deps.db.transaction().execute(async (trx) => {
      const due = await dueDeliveries(trx, now, BATCH);
      if (due.length === 0) return [];
      await trx
        .updateTable("deliveries")
        .set({ next_attempt_at: lease, attempts: sql`attempts + 1` })
        .where(
          "id",
          "in",
          due.map((d) => d.id),
        )
        .execute();
      return trx
        .selectFrom("deliveries as d")
        .innerJoin("endpoints as e", "e.id", "d.endpoint_id")
        .select([
          "d.id",
          "d.endpoint_id",
          "d.message_id",
          "d.event_type",
          "d.payload",
          "d.attempts",
          "d.created_at",
          "e.url",
          "e.secret_sealed",
        ])
        .where(
          "d.id",
          "in",
          due.map((d) => d.id),
        )
        .execute();
    });
  }

  private async attempt(d: Claimed): Promise<void> {
    const startedAt = this.deps.now();
    let result: DeliveryResult;
    try {
      const secret = this.deps.sealer.open(d.secret_sealed, d.endpoint_id);
      const headers = signedHeaders(secret, d.message_id, Math.floor(startedAt.getTime() / 1000), d.payload);
      const stopTimer = webhookDeliveryDuration.startTimer();
      result = await this.deps.deliver(d.url, d.payload, headers);
      stopTimer();
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err) };
    }
    const ok = "status" in result && result.status >= 200 && result.status < 300;
    const outcome = ok ? "delivered" : "refused" in result && result.refused ? "refused" : "failed";
    webhookDeliveries.inc({ event_type: d.event_type, outcome });
    await this.record(d, startedAt, result, ok);
  }

  private async record(d: Claimed, startedAt: Date, result: DeliveryResult, ok: boolean): Promise<void> {
    const now = this.deps.now();
    const settings = this.deps.settings;
    const error = "error" in result ? result.error.slice(0, 500) : ok ? null : `HTTP ${result.status}`;
    // Answers the space of an endpoint it disabled, whose cached subscribers are then out of date.
    // failing_since, the other endpoint column written here, is not cached: writing it invalidates nothing.
    const disabledIn = await this.deps.db.transaction().execute(async (trx) => {
      // The endpoint first, then deliveries (as its deletion's cascade does): disabling it updates all its
      // pending deliveries, so two attempts recorded at once would otherwise deadlock, each holding its
      // own delivery. One statement more at most; FOR NO KEY UPDATE, the lock its update takes anyway.
      const endpoint = await trx
        .selectFrom("endpoints")
        .select(["failing_since", "disabled_at", "space_id", "url"])
        .where("id", "=", d.endpoint_id)
        .forNoKeyUpdate()
        .executeTakeFirst();
      if (!endpoint) return; // deleted meanwhile, with its deliveries: nothing left to record
      await trx
        .insertInto("delivery_attempts")
        .values({
          delivery_id: d.id,
          attempted_at: startedAt,
          response_status: "status" in result ? result.status : null,
          error,
          duration_ms: Math.max(0, now.getTime() - startedAt.getTime()),
        })
        .execute();
      if (ok) {
        await trx
          .updateTable("deliveries")
          .set({ status: "delivered", delivered_at: now, next_attempt_at: null })
          .where("id", "=", d.id)
          .execute();
        if (endpoint.failing_since) {
          await trx
            .updateTable("endpoints")
            .set({ failing_since: null })
            .where("id", "=", d.endpoint_id)
            .execute();
        }
        return;
      }
      // An endpoint disabled meanwhile has failed its pending deliveries, this one too: it stays failed.
      const next = endpoint.disabled_at
        ? undefined
        : nextAttemptAt(d.attempts, now, d.created_at, settings.WEBHOOKS_RETRY_FOR_MS);
      await trx
        .updateTable("deliveries")
        .set(next ? { next_attempt_at: next } : { status: "failed", next_attempt_at: null })
        .where("id", "=", d.id)
        .execute();
      if (endpoint.disabled_at) return;
      const failingSince = endpoint.failing_since ?? startedAt;
      if (now.getTime() - failingSince.getTime() < settings.WEBHOOKS_DISABLE_AFTER_MS) {
        if (!endpoint.failing_since) {
          await trx
            .updateTable("endpoints")
            .set({ failing_since: failingSince })
            .where("id", "=", d.endpoint_id)
            .execute();
        }
        return;
      }
      const reason =
        `every delivery failed since ${failingSince.toISOString()} ` +
        `(${Math.round(settings.WEBHOOKS_DISABLE_AFTER_MS / 3_600_000)} h or more); last error: ${error}`;
      await trx
        .updateTable("endpoints")
        .set({ failing_since: failingSince, disabled_at: now, disabled_reason: reason })
        .where("id", "=", d.endpoint_id)
        .execute();
      await trx
        .updateTable("deliveries")
        .set({ status: "failed", next_attempt_at: null })
        .where("endpoint_id", "=", d.endpoint_id)
        .where(pending())
        .execute();
      webhookEndpointsDisabled.inc();
      this.deps.log.warn("webhook endpoint disabled", {
        endpointId: d.endpoint_id,
        spaceId: endpoint.space_id,
        url: endpoint.url,
        reason,
      });
      return endpoint.space_id;
    });
    if (disabledIn) this.deps.subscribers.changed(disabledIn);
  }
}
