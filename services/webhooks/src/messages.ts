import type { MemoryCreated } from "@avatar/contracts/memory";
import { type Session, SessionState } from "@avatar/contracts/sessions";
import type { WebhookEventType } from "@avatar/runtime";
import { endReasonFromProto, sessionModeName, sessionSourceName, sha256Hex } from "@avatar/runtime";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/**
 * The webhook messages: a Standard Webhooks body `{type, timestamp, data}` per event, and its id. The id
 * is derived from what the event is (its type and the session or memory it is about), so a bus event
 * delivered twice makes the same message, and every retry and every endpoint sees the same
 * `webhook-id`: receivers deduplicate on it.
 */

export interface WebhookMessage {
  id: string;
  type: WebhookEventType;
  spaceId: string;
  /** The exact JSON body. */
  body: string;
}

export function messageId(type: WebhookEventType, subject: string): string {
  return `msg_${sha256Hex(`${type}:${subject}`).slice(0, 32)}`;
}

const iso = (ts: Timestamp | undefined) => (ts ? timestampDate(ts).toISOString() : null);

function message(
  type: WebhookEventType,
  subject: string,
  spaceId: string,
  occurredAt: string,
  data: Record<string, unknown>,
): WebhookMessage {
  return {
    id: messageId(type, subject),
    type,
    spaceId,
    body: JSON.stringify({ type, timestamp: occurredAt, data }),
  };
}

/** The session as a webhook shows it (the public session entry's names). */
function sessionData(s: Session) {
  return {
    session_id: s.id,
    mode: sessionModeName[s.mode],
    source: sessionSourceName[s.source],
    is_sandbox: s.isSandbox,
    avatar_id: s.avatarId || null,
    created_at: iso(s.createdAt),
    started_at: iso(s.startedAt),
  };
}

export function sessionStarted(s: Session): WebhookMessage {
  const at = iso(s.startedAt) ?? new Date(0).toISOString();
  return message("session.started", s.id, s.spaceId, at, sessionData(s));
}

export function sessionEnded(s: Session): WebhookMessage {
  const at = iso(s.endedAt) ?? new Date(0).toISOString();
  return message("session.ended", s.id, s.spaceId, at, {
    ...sessionData(s),
    ended_at: iso(s.endedAt),
    end_reason: s.state === SessionState.ENDED ? (endReasonFromProto(s.endReason) ?? "UNKNOWN") : null,
    /** Whole seconds between start and end. */
    duration: s.duration,
    credits_used: s.creditsConsumed,
  });
}

export function transcriptReady(
  session: { id: string; spaceId: string; endedAt: Date },
  entries: number,
): WebhookMessage {
  return message("session.transcript_ready", session.id, session.spaceId, session.endedAt.toISOString(), {
    session_id: session.id,
    entries,
    ended_at: session.endedAt.toISOString(),
    transcript_path: `/v1/sessions/${session.id}/transcript`,
  });
}

export function memoryCreated(event: MemoryCreated): WebhookMessage | undefined {
  const memory = event.memory;
  if (!memory) return undefined;
  const at = iso(memory.createdAt) ?? new Date(0).toISOString();
  return message("memory.created", memory.id, memory.spaceId, at, {
    memory_id: memory.id,
    memory_type: "session",
    session_id: event.sessionId || null,
    created_at: at,
  });
}
