import type { Bus, Subscription } from "@avatar/bus";
import {
  type SessionLease,
  WorkerHeartbeatAckSchema,
  WorkerHeartbeatSchema,
} from "@avatar/contracts/pipeline";
import { isUuid, type Logger, realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Kysely, sql } from "kysely";
import { extendWorkerDeadlines } from "./repository.js";
import type { SessionsDatabase } from "./schema.js";

export interface WorkerLivenessDeps {
  db: Kysely<SessionsDatabase>;
  bus: Bus;
  log: Logger;
  timeoutMs: number;
  /** SESSION_IDLE_TIMEOUT_MS: the idle deadline counts this long from a session's latest activity. */
  idleTimeoutMs: number;
  now: () => Date;
  /** A heartbeat could (not) be recorded: the database works (fails). */
  onDatabase?: (works: boolean) => void;
}

/**
 * The owners' leases on their sessions. Every worker's heartbeat (a request on pipeline.heartbeat,
 * answered by one replica of the queue group) lists the sessions it serves with their ownership epochs;
 * each one it still owns gets its lease (`worker_deadline_at`) pushed forward by the worker timeout and
 * `worker_seen_at` set to now, which is what lets its begun minutes be charged. The answer lists the
 * sessions it does not own any more (ended, or taken over under a later epoch): the worker stops them.
 * An owner whose lease ran out but that is heard from before another worker took the session keeps it.
 * A lease also carries the session's latest client activity since the worker's last answered heartbeat:
 * it resets the idle timer as a keep-alive would, in the same statement as the leases, instead of a call
 * and a transaction per session (an explicit keep-alive is still a call of its own, answered at once).
 * A lease that runs out makes the scheduler offer the session to the other workers (takeover.ts).
 */
export class WorkerLiveness {
  private subscription: Subscription | undefined;

  constructor(private readonly deps: WorkerLivenessDeps) {}

  /**
   * Gives every running session one full timeout from now before listening: heartbeats sent while this
   * service was down were not recorded, and must not cost sessions whose worker is alive their owner.
   */
  async start(): Promise<void> {
    await extendWorkerDeadlines(this.deps.db, this.deadline());
    this.subscription = this.deps.bus.serve(
      realtimeSubjects.heartbeat,
      async (msg) => {
        const heartbeat = fromBinary(WorkerHeartbeatSchema, msg.data);
        const lost = await this.record(heartbeat.worker?.id ?? "", heartbeat.leases);
        return toBinary(WorkerHeartbeatAckSchema, create(WorkerHeartbeatAckSchema, { lostSessionIds: lost }));
      },
      { queue: "sessions" },
    );
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /**
   * Renews the leases a heartbeat lists and records their activity; answers the ids among them that this
   * worker does not own under the epoch it gave (those it should stop serving).
   */
  async record(
    workerId: string,
    leases: Pick<SessionLease, "sessionId" | "epoch" | "activityAt">[],
  ): Promise<string[]> {
    const valid = leases.filter((l) => isUuid(l.sessionId) && l.epoch > 0);
    if (!workerId || valid.length === 0) return [];
    const ids = valid.map((l) => l.sessionId.toLowerCase());
    const epochs = valid.map((l) => l.epoch);
    const now = this.deps.now();
    // Activity reported late counts from when it happened, never from later than now.
    const activity = valid.map((l) => {
      const at = l.activityAt ? timestampDate(l.activityAt) : undefined;
      return at && Number.isFinite(at.getTime()) ? new Date(Math.min(at.getTime(), now.getTime())) : null;
    });
    let renewed: { id: string }[];
    try {
      // A session already idle past its deadline when the activity happened is not revived: the
      // scheduler ends it, as a keep-alive would find it ended.
      const active = sql`v.activity_at is not null and v.activity_at < s.idle_deadline_at`;
      const latest = sql`greatest(s.last_activity_at, v.activity_at)`;
      const { rows } = await sql<{ id: string }>`
        update sessions as s set
          worker_deadline_at = ${this.deadline()},
          worker_seen_at = ${now},
          takeover_deadline_at = null,
          takeover_attempt_at = null,
          last_activity_at = case when ${active} then ${latest} else s.last_activity_at end,
          idle_deadline_at = case when ${active}
            then ${latest} + make_interval(secs => ${this.deps.idleTimeoutMs / 1000})
            else s.idle_deadline_at end
        from unnest(${ids}::uuid[], ${epochs}::int[], ${activity}::timestamptz[]) as v(id, epoch, activity_at)
        where s.id = v.id and s.worker_epoch = v.epoch and s.worker_id = ${workerId} and s.state = 'STARTED'
        returning s.id`.execute(this.deps.db);
      renewed = rows;
      this.deps.onDatabase?.(true);
    } catch (err) {
      this.deps.onDatabase?.(false);
      this.deps.log.warn("heartbeat not recorded", { workerId, err });
      throw err;
    }
    const kept = new Set(renewed.map((r) => r.id));
    return ids.filter((id) => !kept.has(id));
  }

  private deadline(): Date {
    return new Date(this.deps.now().getTime() + this.deps.timeoutMs);
  }
}
