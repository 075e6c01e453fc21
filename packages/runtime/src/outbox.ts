import type { Bus } from "@avatar/bus";
import { type Message, toBinary } from "@bufbuild/protobuf";
import {
  type ColumnType,
  type DeleteQueryBuilder,
  type Generated,
  type InsertQueryBuilder,
  type Kysely,
  type QueryCreator,
  sql,
  type Transaction,
  type UpdateQueryBuilder,
} from "kysely";
import type { Topic } from "./events.js";
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

/** Another insert made by the statement that writes an event (a CTE of it): one round trip for both. */
export type InsertAlongside = (
  db: QueryCreator<WithOutbox>,
) => InsertQueryBuilder<WithOutbox, WithOutbox, WithOutbox>;

/**
 * A write whose result nobody reads, made as a CTE of another statement (joinWrites): each round trip
 * to Postgres costs more than the write itself.
 */
export type JoinedWrite = (
  db: QueryCreator<WithOutbox>,
) =>
  | InsertQueryBuilder<WithOutbox, WithOutbox, WithOutbox>
  | UpdateQueryBuilder<WithOutbox, WithOutbox, WithOutbox, WithOutbox>
  | DeleteQueryBuilder<WithOutbox, WithOutbox, WithOutbox>;

/**
 * `db` with `writes` as CTEs of whatever statement is built on it. Postgres makes every data-modifying
 * CTE, read or not, on the statement's snapshot: the writes must not touch the rows of each other or of
 * the statement.
 */
export function joinWrites<DB>(db: QueryCreator<DB>, writes: readonly JoinedWrite[]): QueryCreator<DB> {
  let joined = db as QueryCreator<WithOutbox>;
  writes.forEach((write, i) => {
    joined = joined.with(`joined_${i}`, write);
  });
  return joined as QueryCreator<DB>;
}

/**
 * The outbox row of an event, to be written within `trx` as part of one of its statements (joinWrites);
 * `trx` is marked as having enqueued an event.
 */
export function outboxWrite<T extends Message>(
  trx: Transaction<WithOutbox>,
  topic: Topic<T>,
  value: T,
  msgId: string,
  at: Date,
): JoinedWrite {
  transactionsWithEvents.add(trx);
  const row = {
    subject: topic.subject,
    payload: Buffer.from(toBinary(topic.schema, value)),
    msg_id: msgId,
    created_at: at,
  };
  return (db) => db.insertInto("outbox").values(row);
}

/** Puts an event in the outbox within `trx`, with `alongside` (e.g. the notice it goes with) in the same statement. */
export async function enqueueEvent<T extends Message>(
  trx: Transaction<WithOutbox>,
  topic: Topic<T>,
  value: T,
  msgId: string,
  at: Date,
  alongside?: InsertAlongside,
): Promise<void> {
  const write = outboxWrite(trx, topic, value, msgId, at);
  const db: QueryCreator<WithOutbox> = alongside ? joinWrites(trx, [alongside]) : trx;
  await write(db).execute();
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
   * One batch, in order, under row locks so that replicas publish disjoint batches. A row goes once its
   * publish resolved; a failure leaves it (and those after it) for the next run. (Taking the batch with
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
      const done: string[] = [];
      let failure: unknown;
      for (const row of rows) {
        try {
          await this.bus.publishDurable(row.subject, new Uint8Array(row.payload), { msgId: row.msg_id });
          done.push(row.id);
        } catch (err) {
          failure = err;
          break;
        }
      }
      if (done.length > 0) await trx.deleteFrom("outbox").where("id", "in", done).execute();
      return { count: rows.length, failure };
    });
    if (failure !== undefined) throw failure;
    return count;
  }
}
