import type { Bus, Subscription } from "@avatar/bus";
import { type Worker, WorkerHeartbeatSchema } from "@avatar/contracts/pipeline";
import { realtimeSubjects } from "@avatar/runtime";
import { fromBinary } from "@bufbuild/protobuf";
import type { Clock } from "../realtime/clock.js";

/**
 * The workers this process has heard from (every replica hears every heartbeat), for ListWorkers and
 * GetSessionWorker. A worker silent for `expireMs` is gone.
 */
export class WorkerRegistry {
  private readonly seen = new Map<string, { worker: Worker; at: number }>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly expireMs: number,
  ) {}

  start(): void {
    this.subscription = this.bus.subscribe(realtimeSubjects.heartbeat, (msg) => {
      const { worker } = fromBinary(WorkerHeartbeatSchema, msg.data);
      if (worker?.id) this.seen.set(worker.id, { worker, at: this.clock.now() });
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
  }

  /** Live workers, by id. */
  list(): Worker[] {
    const now = this.clock.now();
    for (const [id, entry] of this.seen) {
      if (now - entry.at > this.expireMs) this.seen.delete(id);
    }
    return [...this.seen.values()].map((e) => e.worker).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The live worker whose last heartbeat lists the session. */
  workerOf(sessionId: string): Worker | undefined {
    const id = sessionId.toLowerCase();
    return this.list().find((w) => w.sessionIds.includes(id));
  }
}
