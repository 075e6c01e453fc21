import {
  type Delivery,
  type DeliveryAttempt,
  DeliveryStatus,
  type Endpoint,
} from "@avatar/contracts/webhooks";
import { isoTime, orNull } from "./time.js";

/** Public shapes of webhook endpoints and their delivery log. */

export function presentEndpoint(e: Endpoint) {
  return {
    id: e.id,
    url: e.url,
    event_types: e.eventTypes,
    description: e.description,
    status: e.disabledAt ? "disabled" : "enabled",
    created_at: isoTime(e.createdAt),
    disabled_at: isoTime(e.disabledAt),
    disabled_reason: orNull(e.disabledReason),
    failing_since: isoTime(e.failingSince),
  };
}

const deliveryStatus: Record<DeliveryStatus, string> = {
  [DeliveryStatus.UNSPECIFIED]: "pending",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.DELIVERED]: "delivered",
  [DeliveryStatus.FAILED]: "failed",
};

function presentAttempt(a: DeliveryAttempt) {
  return {
    attempted_at: isoTime(a.attemptedAt),
    response_status: a.responseStatus === 0 ? null : a.responseStatus,
    error: orNull(a.error),
    duration_ms: a.durationMs,
  };
}

export function presentDelivery(d: Delivery) {
  return {
    id: d.id,
    webhook_id: d.messageId,
    event_type: d.eventType,
    status: deliveryStatus[d.status],
    created_at: isoTime(d.createdAt),
    next_attempt_at: isoTime(d.nextAttemptAt),
    delivered_at: isoTime(d.deliveredAt),
    attempts: d.attempts.map(presentAttempt),
  };
}
