/** Durable-event settings shared by both implementations, so they keep and retry messages alike. */
import type { DurableConsumerOptions } from "./bus.js";
import { assertPublishSubject, assertSubscribeSubject } from "./subject.js";

export const EVENTS_PREFIX = "events.";
/** How long published events are kept, acknowledged or not. */
export const EVENTS_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Window in which a repeated msgId is stored only once. */
export const DEDUPE_WINDOW_MS = 2 * 60 * 1000;

export const DEFAULT_ACK_WAIT_MS = 30_000;
export const DEFAULT_RETRY_DELAY_MS = 1_000;
export const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;
/**
 * With the delays above (1, 2, 4, 8, 16, then 30 s) a failing message is tried for about 2.5 minutes
 * before it is given up: longer than an outage of a dependency the services are expected to survive.
 */
export const DEFAULT_MAX_DELIVER = 10;

export type ConsumerSettings = Required<Omit<DurableConsumerOptions, "deadLetterSubject">> & {
  deadLetterSubject: string;
};

export function consumerSettings(consumer: string, options: DurableConsumerOptions = {}): ConsumerSettings {
  const settings = {
    ackWaitMs: options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
    retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
    maxRetryDelayMs:
      options.maxRetryDelayMs ?? Math.max(DEFAULT_MAX_RETRY_DELAY_MS, options.retryDelayMs ?? 0),
    maxDeliver: options.maxDeliver ?? DEFAULT_MAX_DELIVER,
    deadLetterSubject: options.deadLetterSubject ?? deadLetterSubject(consumer),
  };
  if (
    !(settings.ackWaitMs > 0) ||
    !(settings.retryDelayMs >= 0) ||
    !(settings.maxRetryDelayMs >= settings.retryDelayMs) ||
    !(settings.maxDeliver >= 1)
  ) {
    throw new Error(`invalid durable consumer options ${JSON.stringify(options)}`);
  }
  assertDurablePublishSubject(settings.deadLetterSubject);
  return settings;
}

/** The delay before delivery `deliveryCount + 1` of a message whose handler failed `deliveryCount` times. */
export function retryDelayOf(settings: ConsumerSettings, deliveryCount: number): number {
  const doubled = settings.retryDelayMs * 2 ** Math.max(0, deliveryCount - 1);
  return Math.min(doubled, settings.maxRetryDelayMs);
}

/** Where a consumer's given-up messages go: `events.deadletter.<consumer>`. */
export function deadLetterSubject(consumer: string): string {
  return `${DEAD_LETTER_PREFIX}${consumer.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

export const DEAD_LETTER_PREFIX = "events.deadletter.";

function assertEventsSubject(subject: string): void {
  if (!subject.startsWith(EVENTS_PREFIX)) {
    throw new Error(`durable subject "${subject}" must start with "${EVENTS_PREFIX}"`);
  }
}

export function assertDurablePublishSubject(subject: string): void {
  assertEventsSubject(subject);
  assertPublishSubject(subject);
}

export function assertDurableFilter(subject: string): void {
  assertEventsSubject(subject);
  assertSubscribeSubject(subject);
}

export function assertConsumerName(consumer: string): void {
  if (consumer.trim().length === 0) throw new Error("durable consumer name must not be empty");
}
