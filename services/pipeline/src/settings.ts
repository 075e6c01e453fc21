import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";

/** The pipeline service's settings; every duration can be shortened for tests. */
export const pipelineSettings = {
  /** This worker's id in heartbeats and on sessions; a fresh one per process when unset. */
  PIPELINE_WORKER_ID: env.optionalString(),
  /** Sessions this worker runs at once; an assignment beyond it is answered "full". */
  PIPELINE_CAPACITY: env.int({ default: 400, min: 1, max: 100_000 }),
  /**
   * How often the worker renews its leases with a heartbeat (the sessions service's
   * PIPELINE_WORKER_TIMEOUT_MS, after which a silent worker's sessions move, is 3x).
   */
  PIPELINE_HEARTBEAT_MS: env.int({ default: 2_000, min: 20, max: 60_000 }),
  /** A session nobody connects to this long after its start ends with USER_DISCONNECTED. */
  PIPELINE_CONNECT_GRACE_MS: env.int({ default: 60_000, min: 50, max: 3_600_000 }),
  /** A session whose last socket closed ends with USER_DISCONNECTED unless a client reconnects in time. */
  PIPELINE_DISCONNECT_GRACE_MS: env.int({ default: 30_000, min: 50, max: 3_600_000 }),
  /** A socket its gateway has not mentioned (heartbeat or message) this long counts as closed. */
  PIPELINE_CONNECTION_TIMEOUT_MS: env.int({ default: 15_000, min: 50, max: 600_000 }),
  /**
   * How often the sessions whose start is not yet recorded for this worker are checked against the
   * sessions service (running ones are checked by every answered heartbeat: a missed end event).
   */
  PIPELINE_RECONCILE_MS: env.int({ default: 30_000, min: 50, max: 3_600_000 }),
  /** An assigned session that has not started after this long was not started here (its start failed). */
  PIPELINE_START_WAIT_MS: env.int({ default: 20_000, min: 50, max: 600_000 }),
  /**
   * On SIGTERM, how long the worker waits for its sessions to be handed to other workers before it exits
   * anyway (a session not handed over moves when its lease runs out).
   */
  PIPELINE_DRAIN_TIMEOUT_MS: env.int({ default: 5_000, min: 10, max: 600_000 }),
  /**
   * The most client audio a LITE session buffers ahead of its playout (ms); a chunk past it gets an
   * `audio_buffer_full` error. 24 kHz 16-bit audio is 48 KB a second: 60 s is ~2.9 MB a session.
   */
  PIPELINE_LITE_MAX_BUFFERED_MS: env.int({ default: 60_000, min: 1_000, max: 3_600_000 }),
  /** The avatar's video and voice for WHEP viewers; off, sessions run with their events only. */
  PIPELINE_MEDIA: env.bool({ default: true }),
};

export type PipelineSettings = ConfigOf<typeof pipelineSettings>;

export const readPipelineSettings = (source: Env): PipelineSettings => readConfig(pipelineSettings, source);
