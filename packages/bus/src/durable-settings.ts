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
export const DEFAULT_MAX_DELIVER = 10;

export type ConsumerSettings = Required<DurableConsumerOptions>;

export function consumerSettings(options: DurableConsumerOptions = {}): ConsumerSettings {
  const settings = {
    ackWaitMs: options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
    retryDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
    maxDeliver: options.maxDeliver ?? DEFAULT_MAX_DELIVER,
  };
  if (!(settings.ackWaitMs > 0) || !(settings.retryDelayMs >= 0) || !(settings.maxDeliver >= 1)) {
    throw new Error(`invalid durable consumer options ${JSON.stringify(options)}`);
  }
  return settings;
}

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
