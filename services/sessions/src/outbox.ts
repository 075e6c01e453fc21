import type { Bus } from "@avatar/bus";
import type { Logger, Topic } from "@avatar/runtime";
import { type Message, toBinary } from "@bufbuild/protobuf";
import type { Kysely, Transaction } from "kysely";
import type { SessionsDatabase } from "./schema.js";

/**
 * Bus events go through an outbox: written in the transaction of the change they announce, published
 * after it commits (right away, and again by every scheduler tick for whatever is left). Publishing is
 * at-least-once; the message id lets the bus drop a repeat.
 */

export async function enqueueEvent<T extends Message>(
  trx: Transaction<SessionsDatabase>,
  topic: Topic<T>,
  value: T,
  msgId: string,
  at: Date,
): Promise<void> {
  await trx
    .insertInto("outbox")
    .values({
      subject: topic.subject,
      payload: Buffer.from(toBinary(topic.schema, value)),
      msg_id: msgId,
      created_at: at,
    })
    .execute();
}

export class OutboxPublisher {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly db: Kysely<SessionsDatabase>,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly batchSize = 100,
  ) {}

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
        this.log.warn("publishing session events failed; the next tick retries", { err });
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Waits for a publishing run in progress. */
  async idle(): Promise<void> {
    await this.running;
  }

  /**
   * One batch, in order, under row locks so that replicas publish disjoint batches. A row goes once its
   * publish resolved; a failure leaves it (and those after it) for the next run.
   */
  private async publishBatch(): Promise<number> {
    const { count, failure } = await this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom("outbox")
        .selectAll()
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
