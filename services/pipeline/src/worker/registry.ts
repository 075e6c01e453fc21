import type { Bus, Subscription } from "@avatar/bus";
import { type Worker, WorkerHeartbeatSchema, WorkerSchema } from "@avatar/contracts/pipeline";
import { realtimeSubjects } from "@avatar/runtime";
import { fromBinary } from "@bufbuild/protobuf";
import type { Clock } from "../realtime/clock.js";
import { peekNestedString } from "./peek-field.js";

const WORKER_FIELD = WorkerHeartbeatSchema.field.worker.number;
const ID_FIELD = WorkerSchema.field.id.number;

/**
 * A heartbeat's `worker` as bytes, and its id, read without decoding the rest: a worker serving 1,000
 * sessions sends ~90 KB every heartbeat, and every replica hears every worker's; decoding each (3.6-5.7 ms
 * of the event loop) for the rare operator call that reads them would cost replicas x workers decodes
 * a beat. Undefined when the bytes are not a heartbeat with a worker id.
 */
function workerOfHeartbeat(heartbeat: Uint8Array): { id: string; bytes: Uint8Array } | undefined {
  const worker = peekNestedString(heartbeat, WORKER_FIELD, ID_FIELD);
  // a copy: the bus may reuse its buffer
  return worker?.value ? { id: worker.value, bytes: worker.bytes.slice() } : undefined;
}

/**
 * The workers this process has heard from (every replica hears every heartbeat), for ListWorkers and
 * GetSessionWorker. A worker silent for `expireMs` is gone. Each worker's latest heartbeat is kept as
 * bytes and decoded when an operator asks.
 */
export class WorkerRegistry {
  private readonly seen = new Map<string, { bytes: Uint8Array; at: number }>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly expireMs: number,
  ) {}

  start(): void {
    this.subscription = this.bus.subscribe(realtimeSubjects.heartbeat, (msg) => {
      const worker = workerOfHeartbeat(msg.data);
      if (worker) this.seen.set(worker.id, { bytes: worker.bytes, at: this.clock.now() });
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
    return [...this.seen.values()]
      .flatMap(({ bytes }) => {
        try {
          return [fromBinary(WorkerSchema, bytes)];
        } catch {
          return []; // its id read, the rest malformed: not a worker to list
        }
      })
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The live worker whose last heartbeat lists the session. */
  workerOf(sessionId: string): Worker | undefined {
    const id = sessionId.toLowerCase();
    return this.list().find((w) => w.sessionIds.includes(id));
  }
}
