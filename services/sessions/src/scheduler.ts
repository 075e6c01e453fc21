import type { Logger, OutboxPublisher } from "@avatar/runtime";
import type { Kysely } from "kysely";
import type { SessionLifecycle } from "./lifecycle.js";
import { dueSessionIds } from "./repository.js";
import type { SessionsDatabase } from "./schema.js";
import { deleteExpiredTickets } from "./tickets.js";

export interface SchedulerDeps {
  db: Kysely<SessionsDatabase>;
  lifecycle: SessionLifecycle;
  outbox: OutboxPublisher;
  log: Logger;
  tickMs: number;
  now: () => Date;
  /** Sessions looked at per round; a round repeats at once while it finds a full batch. */
  batchSize?: number;
}

/** Used tickets and expired ones are kept this long (for investigation), then deleted. */
const TICKET_RETENTION_MS = 60 * 60 * 1000;

/**
 * The timer loop: every tick it finds sessions whose earliest timer (`due_at`) has passed and settles
 * each in its own transaction. Rows are claimed with FOR UPDATE SKIP LOCKED, so replicas running this
 * loop on one database split the work instead of repeating it; the ledger's unique key makes a repeated
 * charge impossible anyway. All state is in the rows, so a restart resumes where the last run stopped.
 */
export class SessionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private stopped = true;
  private lastCleanup = 0;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the loop and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  /** One round: every session due now, then the outbox and old tickets. Answers how many it settled. */
  async runOnce(): Promise<number> {
    const size = this.deps.batchSize ?? 100;
    let settled = 0;
    for (;;) {
      const ids = await dueSessionIds(this.deps.db, this.deps.now(), size);
      let claimed = 0;
      for (const id of ids) {
        if (await this.deps.lifecycle.settleDue(id)) claimed += 1;
      }
      settled += claimed;
      // A short batch was everything; a batch held by another replica is its work, not ours.
      if (ids.length < size || claimed === 0 || this.stopped) break;
    }
    await this.deps.outbox.kick();
    await this.cleanup();
    return settled;
  }

  private async cleanup(): Promise<void> {
    const now = this.deps.now();
    if (now.getTime() - this.lastCleanup < TICKET_RETENTION_MS / 4) return;
    this.lastCleanup = now.getTime();
    await deleteExpiredTickets(this.deps.db, now, TICKET_RETENTION_MS);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.runOnce()
        .then(
          () => undefined,
          (err: unknown) => this.deps.log.warn("session timer round failed; retrying next tick", { err }),
        )
        .finally(() => {
          this.current = undefined;
          this.schedule(this.deps.tickMs);
        });
    }, delayMs);
  }
}
