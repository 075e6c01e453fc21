import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";

/** The webhooks service's settings; every duration can be shortened for tests. */
export const webhooksSettings = {
  /**
   * Lets deliveries reach loopback receivers (127.0.0.0/8, ::1, localhost): for local development only.
   * Private, link-local and other internal addresses stay refused.
   */
  WEBHOOKS_ALLOW_LOOPBACK: env.bool({ default: false }),
  /** How often each replica looks for deliveries that are due. */
  WEBHOOKS_TICK_MS: env.int({ default: 1_000, min: 10, max: 60_000 }),
  /** How long one attempt may take (connect, send, answer). */
  WEBHOOKS_TIMEOUT_MS: env.int({ default: 10_000, min: 100, max: 60_000 }),
  /** A delivery is retried (with backoff) for this long after its event, then marked failed. */
  WEBHOOKS_RETRY_FOR_MS: env.int({ default: 86_400_000, min: 1_000, max: 7 * 86_400_000 }),
  /** An endpoint whose deliveries have failed without a success for this long is disabled. */
  WEBHOOKS_DISABLE_AFTER_MS: env.int({ default: 86_400_000, min: 1_000, max: 30 * 86_400_000 }),
  /**
   * session.transcript_ready is sent this long after a session ended (the last entries are written
   * just after the end), when the session has a transcript.
   */
  WEBHOOKS_TRANSCRIPT_SETTLE_MS: env.int({ default: 15_000, min: 0, max: 3_600_000 }),
  /** Endpoints one space may register. */
  WEBHOOKS_MAX_ENDPOINTS: env.int({ default: 20, min: 1, max: 1_000 }),
};

export type WebhooksSettings = ConfigOf<typeof webhooksSettings>;

export const readWebhooksSettings = (source: Env): WebhooksSettings => readConfig(webhooksSettings, source);
