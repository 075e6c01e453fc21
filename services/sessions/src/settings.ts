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
};

export type SessionSettings = ConfigOf<typeof sessionSettings>;

export const readSessionSettings = (source: Env): SessionSettings => readConfig(sessionSettings, source);
