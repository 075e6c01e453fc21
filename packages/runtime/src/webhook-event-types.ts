/** The event types a webhook endpoint can subscribe to (their wire names): the gateway and the webhooks service share them. */
export const WEBHOOK_EVENT_TYPES = [
  "session.started",
  "session.ended",
  "session.transcript_ready",
  "memory.created",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
