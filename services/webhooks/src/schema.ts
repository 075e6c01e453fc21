import type { ColumnType, Generated, Selectable } from "kysely";

/** The webhooks service's tables (Postgres schema `webhooks`). */
export interface WebhooksDatabase {
  endpoints: EndpointTable;
  deliveries: DeliveryTable;
  delivery_attempts: DeliveryAttemptTable;
  transcript_checks: TranscriptCheckTable;
}

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type OptionalTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface EndpointTable {
  id: string;
  space_id: string;
  url: string;
  /** Wire names (event-types.ts). */
  event_types: ColumnType<string[], string, string>;
  description: string;
  /** The signing secret, sealed (AES-256-GCM, ENCRYPTION_KEYS). */
  secret_sealed: string;
  created_at: Timestamp;
  disabled_at: OptionalTimestamp;
  disabled_reason: string | null;
  /** The first failed attempt since the last success. */
  failing_since: OptionalTimestamp;
}

export type DeliveryStatusValue = "pending" | "delivered" | "failed";

/** The outbox of webhook messages: one row per event and endpoint. */
export interface DeliveryTable {
  id: string;
  endpoint_id: string;
  /** webhook-id: one per event, the same for every endpoint and every attempt. */
  message_id: string;
  event_type: string;
  /** The exact body every attempt sends. */
  payload: string;
  status: DeliveryStatusValue;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  /** Due time of the next attempt (also a claimed attempt's lease); null once settled. */
  next_attempt_at: OptionalTimestamp;
  delivered_at: OptionalTimestamp;
  /** Orders the log newest first. */
  seq: Generated<string>;
}

export interface DeliveryAttemptTable {
  id: Generated<string>;
  delivery_id: string;
  attempted_at: Timestamp;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

/** A session that ended: is there a transcript to announce once the last entries are written? */
export interface TranscriptCheckTable {
  session_id: string;
  space_id: string;
  ended_at: Timestamp;
  due_at: Timestamp;
}

export type EndpointRow = Selectable<EndpointTable>;
export type DeliveryRow = Selectable<DeliveryTable>;
export type DeliveryAttemptRow = Selectable<DeliveryAttemptTable>;
