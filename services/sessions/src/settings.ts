import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";

/** The sessions service's settings; every duration can be shortened for tests. */
export const sessionSettings = {
  /** How often the scheduler looks for due timers (charges, idle, max duration, reaping). */
  SESSIONS_TICK_MS: env.int({ default: 1_000, min: 10, max: 60_000 }),
  /** The length of a billed minute (shortened in tests to run billing fast). */
  SESSION_MINUTE_MS: env.int({ default: 60_000, min: 100, max: 3_600_000 }),
  /** A started session without keep-alive or client activity for this long ends with IDLE_TIMEOUT. */
  SESSION_IDLE_TIMEOUT_MS: env.int({ default: 300_000, min: 100, max: 86_400_000 }),
  /** A session not started this long after its token was minted ends with ZOMBIE_SESSION_REAP. */
  SESSION_START_TIMEOUT_MS: env.int({ default: 600_000, min: 100, max: 86_400_000 }),
  /** How long a sandbox session may run, whatever it asked for (ends with MAX_DURATION_REACHED). */
  SESSION_SANDBOX_MAX_DURATION_MS: env.int({ default: 60_000, min: 100, max: 3_600_000 }),
  /** How long the single-use ticket of a ws_url stays valid. */
  SESSION_CONNECT_TICKET_TTL_MS: env.int({ default: 60_000, min: 100, max: 3_600_000 }),
  /**
   * A start asks a pipeline worker to claim the session and fails with 503 when none does. Only the
   * sessions service's own tests, which run no pipeline, turn it off.
   */
  SESSIONS_REQUIRE_PIPELINE: env.bool({ default: true }),
  /** How long one assignment request waits for a worker's answer. */
  PIPELINE_ASSIGN_TIMEOUT_MS: env.int({ default: 3_000, min: 10, max: 60_000 }),
  /** Assignment requests of one start while the workers that answer are full. */
  PIPELINE_ASSIGN_ATTEMPTS: env.int({ default: 3, min: 1, max: 20 }),
  /**
   * A started session whose worker has not been heard from this long (its lease) is offered to the other
   * workers. The workers' PIPELINE_HEARTBEAT_MS should be a third of it or less.
   */
  PIPELINE_WORKER_TIMEOUT_MS: env.int({ default: 6_000, min: 100, max: 3_600_000 }),
  /** How long a session whose worker was lost is offered to the others before it ends (SERVER_ERROR). */
  PIPELINE_TAKEOVER_TIMEOUT_MS: env.int({ default: 15_000, min: 100, max: 3_600_000 }),
  /** How often a session waiting for a new worker is offered again. */
  PIPELINE_TAKEOVER_RETRY_MS: env.int({ default: 1_000, min: 10, max: 60_000 }),
  /**
   * An outage of the bus or the database shorter than this ends no session: while this service cannot
   * hear the workers' heartbeats and activity reports it does not judge sessions on them (idle timeout,
   * worker leases); after this long it does again.
   */
  SESSIONS_OUTAGE_BOUND_MS: env.int({ default: 60_000, min: 0, max: 3_600_000 }),
  /**
   * After starting, or after its bus or database came back, this service waits this long before judging
   * sessions on reports, so that the heartbeats and activity held during the outage can arrive.
   */
  SESSIONS_RECOVERY_GRACE_MS: env.int({ default: 10_000, min: 0, max: 600_000 }),
  /**
   * How many inserts of new sessions may be out at once (created-insert.ts); 0: one per turn of the
   * event loop, however many that makes. The one-process suite sets 1 (start-suite.ts).
   */
  SESSIONS_CREATION_INSERTS_IN_FLIGHT: env.int({ default: 0, min: 0, max: 64 }),
};

export type SessionSettings = ConfigOf<typeof sessionSettings>;

export const readSessionSettings = (source: Env): SessionSettings => readConfig(sessionSettings, source);
