import { SessionMode, SessionSource } from "@avatar/contracts/common";
import {
  ConnectionState,
  type LedgerEntry,
  LedgerEntrySchema,
  type Session,
  SessionEndReason,
  type SessionEvent,
  SessionEventSchema,
  SessionSchema,
  SessionState,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "@avatar/contracts/sessions";
import { endReasonToProto, toTimestamp } from "@avatar/runtime";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { formatCredits } from "./ledger.js";
import {
  CONNECTION_STATES,
  type ConnectionStateValue,
  type LedgerRow,
  type SessionEventRow,
  type SessionModeValue,
  type SessionRow,
  type SessionSourceValue,
  type SessionStateValue,
  type TranscriptEntryRow,
} from "./schema.js";

/** Rows to protobuf messages, and the enum values of both sides. */

const stateToProto: Record<SessionStateValue, SessionState> = {
  CREATED: SessionState.CREATED,
  STARTED: SessionState.STARTED,
  ENDED: SessionState.ENDED,
};

const modeToProto: Record<SessionModeValue, SessionMode> = {
  FULL: SessionMode.FULL,
  LITE: SessionMode.LITE,
};

const sourceToProto: Record<SessionSourceValue, SessionSource> = {
  API: SessionSource.API,
  EMBED: SessionSource.EMBED,
  DEMO: SessionSource.DEMO,
};

export function connectionStateFromProto(state: ConnectionState): ConnectionStateValue | undefined {
  const name = ConnectionState[state] as string | undefined;
  return (CONNECTION_STATES as readonly string[]).includes(name ?? "")
    ? (name as ConnectionStateValue)
    : undefined;
}

export function modeFromProto(mode: SessionMode): SessionModeValue | undefined {
  return mode === SessionMode.FULL ? "FULL" : mode === SessionMode.LITE ? "LITE" : undefined;
}

const sourceFromProtoValue = new Map(
  (Object.entries(sourceToProto) as [SessionSourceValue, SessionSource][]).map(([name, value]) => [
    value,
    name,
  ]),
);

export function sourceFromProto(source: SessionSource): SessionSourceValue | undefined {
  return sourceFromProtoValue.get(source);
}

/** Whole seconds from start to end, or to `now` while the session runs. */
export function durationSeconds(row: Pick<SessionRow, "started_at" | "ended_at">, now: Date): number {
  if (!row.started_at) return 0;
  const end = row.ended_at ?? now;
  return Math.max(0, Math.floor((end.getTime() - row.started_at.getTime()) / 1000));
}

export function sessionToProto(row: SessionRow, now: Date): Session {
  return create(SessionSchema, {
    id: row.id,
    spaceId: row.space_id,
    apiKeyId: row.api_key_id ?? "",
    state: stateToProto[row.state],
    mode: modeToProto[row.mode],
    isSandbox: row.is_sandbox,
    source: sourceToProto[row.source],
    avatarId: row.avatar_id ?? "",
    embedId: row.embed_id ?? "",
    contextId: row.context_id ?? "",
    voiceAgentId: row.voice_agent_id ?? "",
    memoryId: row.memory_id ?? "",
    maxSessionDuration: row.max_session_duration,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
    startedAt: toTimestamp(row.started_at),
    endedAt: toTimestamp(row.ended_at),
    endReason: row.end_reason ? endReasonToProto(row.end_reason) : SessionEndReason.UNSPECIFIED,
    duration: durationSeconds(row, now),
    creditsConsumed: row.credits_consumed,
    connectionState: ConnectionState[row.connection_state],
    lastActivityAt: toTimestamp(row.last_activity_at),
    pipelineWorkerId: row.worker_id ?? "",
    pipelineEpoch: row.worker_epoch,
  });
}

export function transcriptEntryToProto(row: TranscriptEntryRow): TranscriptEntry {
  return create(TranscriptEntrySchema, {
    role: row.role,
    transcript: row.transcript,
    absoluteTimestamp: BigInt(row.absolute_timestamp),
    relativeTimestamp: BigInt(row.relative_timestamp),
    entryId: row.entry_id,
  });
}

export function sessionEventToProto(row: SessionEventRow): SessionEvent {
  return create(SessionEventSchema, {
    id: row.id,
    sessionId: row.session_id,
    type: row.type,
    payload: (row.payload ?? {}) as JsonObject,
    createdAt: toTimestamp(row.created_at),
  });
}

export function ledgerEntryToProto(row: LedgerRow): LedgerEntry {
  return create(LedgerEntrySchema, {
    id: row.id,
    spaceId: row.space_id,
    kind: row.kind,
    amount: formatCredits(row.amount),
    sessionId: row.session_id ?? "",
    minuteIndex: row.minute_index ?? 0,
    note: row.note,
    createdAt: toTimestamp(row.created_at),
  });
}
