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
  /** A started session whose worker has not been heard from this long ends with SERVER_ERROR. */
  PIPELINE_WORKER_TIMEOUT_MS: env.int({ default: 15_000, min: 100, max: 3_600_000 }),
};

export type SessionSettings = ConfigOf<typeof sessionSettings>;

export const readSessionSettings = (source: Env): SessionSettings => readConfig(sessionSettings, source);
