import type { Logger } from "@avatar/runtime";
import type { Kysely } from "kysely";
import type { SessionLifecycle, StartPreparation } from "./lifecycle.js";
import { waitingForTakeoverIds } from "./repository.js";
import type { SessionRow, SessionsDatabase } from "./schema.js";

export interface TakeoverDeps {
  db: Kysely<SessionsDatabase>;
  lifecycle: SessionLifecycle;
  /** Asks the workers' queue group to take a running session (pipeline-assignment.ts). */
  assign: (session: SessionRow, options: { takeover: boolean }) => Promise<StartPreparation>;
  log: Logger;
  now: () => Date;
}

/** Sessions offered at once; each offer is a bus round trip to the workers. */
const PARALLEL_OFFERS = 16;

/**
 * Moves sessions whose worker was lost (its lease ran out) or handed them over to another worker. Each
 * session waiting for one (`takeover_deadline_at` set) is offered to the workers' queue group; the worker
 * that claims it is recorded as the owner under the next epoch with a compare-and-set, and from then on
 * only that worker's frames reach the clients and only its calls are accepted. Offers repeat every
 * PIPELINE_TAKEOVER_RETRY_MS (replicas take turns) until the takeover deadline, when the scheduler ends
 * the session with SERVER_ERROR as of the moment it was last served.
 */
export class SessionTakeover {
  private running: Promise<void> | undefined;

  constructor(private readonly deps: TakeoverDeps) {}

  /** Offers what waits, in the background (one run at a time). */
  kick(): void {
    this.running ??= this.runOnce()
      .then(() => undefined)
      .catch((err: unknown) => this.deps.log.warn("offering sessions to workers failed", { err }))
      .finally(() => {
        this.running = undefined;
      });
  }

  async idle(): Promise<void> {
    await this.running;
  }

  /** One round: every waiting session due for an offer. Answers how many found a new worker. */
  async runOnce(): Promise<number> {
    const ids = await waitingForTakeoverIds(this.deps.db, 200);
    let moved = 0;
    for (let i = 0; i < ids.length; i += PARALLEL_OFFERS) {
      const batch = ids.slice(i, i + PARALLEL_OFFERS);
      const taken = await Promise.all(
        batch.map(async (id) => {
          const row = await this.deps.lifecycle.claimTakeoverOffer(id);
          return row ? Boolean(await this.offer(row)) : false;
        }),
      );
      moved += taken.filter(Boolean).length;
    }
    return moved;
  }

  /** Offers one session claimed for an offer; answers the worker that took it, if one did. */
  async offer(row: SessionRow): Promise<string | undefined> {
    const fields = { sessionId: row.id, lostWorker: row.worker_id, epoch: row.worker_epoch };
    let workerId: string | undefined;
    try {
      workerId = (await this.deps.assign(row, { takeover: true })).workerId;
    } catch (err) {
      this.deps.log.warn("no worker took the session over (yet)", { ...fields, err });
      return undefined;
    }
    if (!workerId) return undefined;
    const taken = await this.deps.lifecycle.recordTakeover(row.id, workerId, row.worker_epoch);
    if (!taken) return undefined;
    this.deps.log.info("session taken over", { ...fields, workerId, newEpoch: taken.worker_epoch });
    return workerId;
  }
}
