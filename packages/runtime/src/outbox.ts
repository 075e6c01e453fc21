import type { Bus } from "@avatar/bus";
import { type Message, toBinary } from "@bufbuild/protobuf";
import { type ColumnType, type Generated, type Kysely, sql, type Transaction } from "kysely";
import type { Topic } from "./events.js";
import { type JoinedInsert, runInsert } from "./joined-inserts.js";
import type { Logger } from "./log.js";
import { outboxDepth } from "./metrics/catalog.js";
import { sampleInto } from "./metrics/sampled.js";

/**
 * Bus events go through an outbox: written in the transaction of the change they announce, published
 * after it commits (right away, and again by the owner's periodic kick for whatever is left). Publishing
 * is at-least-once; the message id lets the bus drop a repeat. A service that publishes events keeps an
 * `outbox` table of this shape (outboxMigration creates it) and one OutboxPublisher.
 */

export interface OutboxTable {
  id: Generated<string>;
  subject: string;
  payload: Buffer;
  msg_id: string;
  created_at: ColumnType<Date, Date | string, Date | string>;
}

export interface OutboxDatabase {
  outbox: OutboxTable;
}

/** Creates the outbox table (a service's dated migration calls it). */
export async function createOutboxTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("outbox")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("payload", "bytea", (c) => c.notNull())
    .addColumn("msg_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
}

/** Any service database that has the outbox table; the casts below only forget its other tables. */
// biome-ignore lint/suspicious/noExplicitAny: each service's database type differs; only `outbox` is used
type WithOutbox = any;

/** Transactions that put an event in the outbox: only those need a publishing run after they end. */
const transactionsWithEvents = new WeakSet<object>();

/** Whether `trx` called enqueueEvent (its owner kicks the publisher after the commit; others need not). */
export const enqueuedEvents = (trx: Transaction<WithOutbox>): boolean => transactionsWithEvents.has(trx);

/**
 * The outbox row of an event, to be written by one of `trx`'s statements (a JoinedInsert of it), and
 * `trx` marked as having enqueued an event. Without `trx` (a statement made outside a transaction) the
 * caller kicks the publisher itself once the statement succeeded.
 */
export function outboxInsert<T extends Message>(
  trx: Transaction<WithOutbox> | undefined,
  topic: Topic<T>,
  value: T,
  msgId: string,
  at: Date,
): JoinedInsert {
  if (trx) transactionsWithEvents.add(trx);
  const row = {
    subject: topic.subject,
    payload: Buffer.from(toBinary(topic.schema, value)),
    msg_id: msgId,
    created_at: at,
  };
  return { into: "outbox", rows: [row] };
}

/** Puts an event in the outbox within `trx`. */
export async function enqueueEvent<T extends Message>(
  trx: Transaction<WithOutbox>,
  topic: Topic<T>,
  value: T,
  msgId: string,
  at: Date,
): Promise<void> {
  await runInsert(trx, outboxInsert(trx, topic, value, msgId, at));
}

export class OutboxPublisher {
  private readonly db: Kysely<OutboxDatabase>;
  private running: Promise<void> | undefined;
  private again = false;
  private unmeter: (() => void) | undefined;

  constructor(
    db: Kysely<WithOutbox>,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly batchSize = 100,
  ) {
    this.db = db as unknown as Kysely<OutboxDatabase>;
  }

  /** Reports this outbox's depth as `avatar_outbox_depth{service}` until `stopMetering`. */
  meter(service: string): void {
    this.unmeter?.();
    this.unmeter = sampleInto(outboxDepth, async () => {
      const row = await this.db.selectFrom("outbox").select(sql<string>`count(*)`.as("n")).executeTakeFirst();
      return [{ labels: { service }, value: Number(row?.n ?? 0) }];
    });
  }

  /** Publishes what is waiting, soon; concurrent calls share one run (plus one more for late arrivals). */
  kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while ((await this.publishBatch()) === this.batchSize) {}
        } while (this.again);
      } catch (err) {
        this.log.warn("publishing outbox events failed; the next kick retries", { err });
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Waits for a publishing run in progress, and stops reporting the depth. */
  async idle(): Promise<void> {
    this.unmeter?.();
    this.unmeter = undefined;
    await this.running;
  }

  /**
   * One batch, under row locks so that replicas publish disjoint batches. Its events are sent at once, in
   * order, each publish awaiting its own acknowledgement: one after the other, a batch took a round trip
   * to NATS per event, and under load a session's `started` event reached its pipeline worker after the
   * worker had given up waiting for it and asked the sessions service instead (2026-12-07, `pnpm
   * bench:phases` as processes: two GetSessionConfig calls per session, none once sent at once). The rows
   * up to the first failed publish go; that one and all after it stay for the next run, in order, so the
   * ones after it that did go out are sent again (at least once; the bus drops a repeat by its message
   * id), and may have reached their consumers before it, as a redelivery may anyway. (Taking the batch with
   * one `delete ... where id in (select ... skip locked) returning` was tried: Postgres planned it as a
   * semi join over two scans of the outbox and spent ~10 % more per session lifecycle, 2026-11-24.)
   */
  private async publishBatch(): Promise<number> {
    const { count, failure } = await this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom("outbox")
        .select(["id", "subject", "payload", "msg_id"])
        .orderBy("id")
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      const outcomes = await Promise.allSettled(
        rows.map((row) =>
          this.bus.publishDurable(row.subject, new Uint8Array(row.payload), { msgId: row.msg_id }),
        ),
      );
      const failed = outcomes.findIndex((o) => o.status === "rejected");
      const done = (failed === -1 ? rows : rows.slice(0, failed)).map((row) => row.id);
      const rejected = outcomes[failed];
      const failure = rejected?.status === "rejected" ? { reason: rejected.reason as unknown } : undefined;
      // `= any($1)`, not `in ($1, ..., $n)`: one statement text (one prepared statement) for any batch.
      if (done.length > 0) {
        await trx
          .deleteFrom("outbox")
          .where((eb) => eb("id", "=", eb.fn.any(eb.val(done))))
          .execute();
      }
      return { count: rows.length, failure };
    });
    if (failure) throw failure.reason;
    return count;
  }
}
