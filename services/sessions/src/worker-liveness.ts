import type { Bus, Subscription } from "@avatar/bus";
import { WorkerHeartbeatSchema } from "@avatar/contracts/pipeline";
import { isUuid, type Logger, realtimeSubjects } from "@avatar/runtime";
import { fromBinary } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import type { SessionsDatabase } from "./schema.js";

export interface WorkerLivenessDeps {
  db: Kysely<SessionsDatabase>;
  bus: Bus;
  log: Logger;
  timeoutMs: number;
  now: () => Date;
}

/**
 * Keeps started sessions alive while their pipeline worker says it runs them: each heartbeat pushes
 * `worker_deadline_at` of the sessions it lists forward by the worker timeout. A session its worker no
 * longer lists (the worker died, or lost it) reaches the deadline, and the scheduler ends it with
 * SERVER_ERROR like any other timer. Replicas share the heartbeats through a queue group.
 */
export class WorkerLiveness {
  private subscription: Subscription | undefined;

  constructor(private readonly deps: WorkerLivenessDeps) {}

  /**
   * Gives every running session one full timeout from now before listening: heartbeats sent while this
   * service was down were not recorded, and must not end sessions whose worker is alive.
   */
  async start(): Promise<void> {
    await this.deps.db
      .updateTable("sessions")
      .set({ worker_deadline_at: this.deadline() })
      .where("state", "=", "STARTED")
      .where("worker_id", "is not", null)
      .where("worker_deadline_at", "<", this.deadline())
      .execute();
    this.subscription = this.deps.bus.subscribe(
      realtimeSubjects.heartbeat,
      async (msg) => {
        await this.record(fromBinary(WorkerHeartbeatSchema, msg.data).worker);
      },
      { queue: "sessions" },
    );
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /** Moves the deadlines of the sessions a heartbeat lists (and that this worker runs). */
  async record(worker: { id: string; sessionIds: string[] } | undefined): Promise<number> {
    const ids = (worker?.sessionIds ?? []).filter(isUuid).map((id) => id.toLowerCase());
    if (!worker?.id || ids.length === 0) return 0;
    const result = await this.deps.db
      .updateTable("sessions")
      .set({ worker_deadline_at: this.deadline() })
      .where("worker_id", "=", worker.id)
      .where("state", "=", "STARTED")
      .where("id", "in", ids)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  private deadline(): Date {
    return new Date(this.deps.now().getTime() + this.deps.timeoutMs);
  }
}
