import {
  type Delivery,
  type DeliveryAttempt,
  DeliveryAttemptSchema,
  DeliverySchema,
  DeliveryStatus,
  type Endpoint,
  EndpointSchema,
} from "@avatar/contracts/webhooks";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatusValue, EndpointRow } from "./schema.js";

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export function endpointToProto(row: EndpointRow): Endpoint {
  return create(EndpointSchema, {
    id: row.id,
    spaceId: row.space_id,
    url: row.url,
    eventTypes: row.event_types,
    description: row.description,
    createdAt: ts(row.created_at),
    disabledAt: ts(row.disabled_at),
    disabledReason: row.disabled_reason ?? "",
    failingSince: ts(row.failing_since),
  });
}

const status: Record<DeliveryStatusValue, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
};

export function attemptToProto(row: DeliveryAttemptRow): DeliveryAttempt {
  return create(DeliveryAttemptSchema, {
    attemptedAt: ts(row.attempted_at),
    responseStatus: row.response_status ?? 0,
    error: row.error ?? "",
    durationMs: row.duration_ms,
  });
}

export function deliveryToProto(row: DeliveryRow, attempts: DeliveryAttemptRow[]): Delivery {
  return create(DeliverySchema, {
    id: row.id,
    messageId: row.message_id,
    eventType: row.event_type,
    status: status[row.status],
    createdAt: ts(row.created_at),
    nextAttemptAt: row.status === "pending" ? ts(row.next_attempt_at) : undefined,
    deliveredAt: ts(row.delivered_at),
    attempts: attempts.map(attemptToProto),
  });
}
