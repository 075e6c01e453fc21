import {
  type CreateSessionRequest,
  SessionEndReason,
  type SessionEvent,
  SessionListType,
  SessionsService,
  TranscriptWrittenSchema,
} from "@avatar/contracts/sessions";
import type { EndReasonName, Logger } from "@avatar/runtime";
import {
  answerEach,
  conflict,
  endReasonFromProto,
  enqueueEvent,
  invalidRequest,
  isUuid,
  notFound,
  type OutboxPublisher,
  pageInfo,
  pageWindow,
  requestIdOf,
  topics,
  toTimestamp,
} from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import * as ledger from "./ledger.js";
import { assertOwner, readConfig, type SessionLifecycle } from "./lifecycle.js";
import {
  connectionStateFromProto,
  ledgerEntryToProto,
  sessionEventToProto,
  sessionToProto,
  transcriptEntryToProto,
} from "./mapping.js";
import * as repo from "./repository.js";
import type { SessionRow, SessionsDatabase } from "./schema.js";
import {
  appendEventsOfSessions,
  appendSessionEvents,
  deleteSessionHistory,
  listSessionEvents,
  type NewSessionEvent,
} from "./session-events.js";
import type { SessionTakeover } from "./takeover.js";
import { appendTranscript, readTranscript, TRANSCRIPT_ROLES } from "./transcript.js";
import type { SessionRooms } from "./transport-a-rooms.js";

export interface SessionsServiceDeps {
  db: Kysely<SessionsDatabase>;
  lifecycle: SessionLifecycle;
  outbox: OutboxPublisher;
  takeover: SessionTakeover;
  now: () => Date;
  /** Where a batch call's failed items are logged (the server logs the failures of whole calls). */
  log: Logger;
  /** The deployment's transportA session rooms, when it has a transportA server. */
  rooms?: SessionRooms | undefined;
}

/** Most entries or events one append takes. */
const MAX_APPEND = 1000;
const MAX_TRANSCRIPT_CHARS = 100_000;
const MAX_IDEMPOTENCY_KEY = 200;

const sessionNotFound = () => notFound("Session not found", { field: "session_id" });

/** The events of an append, checked; those without a time are stamped `at`. */
function newEvents(events: SessionEvent[], at: Date): NewSessionEvent[] {
  return events.map((e, i) => {
    if (!e.type) throw invalidRequest(`events[${i}].type is required`, { field: "type" });
    if (e.id && !isUuid(e.id)) throw invalidRequest(`events[${i}].id must be a UUID`, { field: "id" });
    return {
      id: e.id,
      type: e.type,
      payload: e.payloadJson ? payloadFromJson(e.payloadJson, i, e.payload) : (e.payload ?? {}),
      createdAt: e.createdAt ? timestampDate(e.createdAt) : at,
    };
  });
}

/** An event's payload_json: the text of one JSON object, and no payload beside it. */
function payloadFromJson(text: string, i: number, payload: unknown): Record<string, unknown> {
  const field = { field: "payload_json" };
  if (payload !== undefined) throw invalidRequest(`events[${i}] sets both payload and payload_json`, field);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest(`events[${i}].payload_json is not JSON`, field);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest(`events[${i}].payload_json must be a JSON object`, field);
  }
  return value as Record<string, unknown>;
}

/** An end reason of a request: UNSPECIFIED takes `fallback`, an unknown number is refused. */
function reasonOf(reason: SessionEndReason, fallback: EndReasonName): EndReasonName {
  if (reason === SessionEndReason.UNSPECIFIED) return fallback;
  const value = endReasonFromProto(reason);
  if (!value) throw invalidRequest("reason is not a known end reason", { field: "reason" });
  return value;
}

function filterUuid(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!isUuid(value)) throw invalidRequest(`${field} must be a UUID`, { field });
  return value.toLowerCase();
}

function requireSpaceId(spaceId: string): string {
  if (!isUuid(spaceId)) throw invalidRequest("space_id must be a UUID", { field: "space_id" });
  return spaceId.toLowerCase();
}

export function sessionsService(deps: SessionsServiceDeps): ServiceImpl<typeof SessionsService> {
  const { db, lifecycle, now } = deps;
  const present = (row: SessionRow) => sessionToProto(row, now());

  /** A session of the space, or NotFound (another space's session is reported as missing). */
  async function sessionInSpace(spaceId: string, sessionId: string): Promise<SessionRow> {
    const row = isUuid(sessionId) ? await repo.findSession(db, sessionId) : undefined;
    if (!row || !isUuid(spaceId) || row.space_id !== spaceId.toLowerCase()) throw sessionNotFound();
    return row;
  }

  async function anySession(sessionId: string): Promise<SessionRow> {
    const row = isUuid(sessionId) ? await repo.findSession(db, sessionId) : undefined;
    if (!row) throw sessionNotFound();
    return row;
  }

  const newSession = (req: CreateSessionRequest) => ({
    sessionId: req.sessionId,
    spaceId: req.spaceId,
    apiKeyId: req.apiKeyId,
    config: req.config,
    maxSessionDuration: req.maxSessionDuration,
    embedAdmission: req.embedAdmission,
  });

  return {
    async createSession(req) {
      return { session: present(await lifecycle.create(newSession(req))) };
    },

    async createSessionsBatch(req, ctx) {
      const outcomes = await answerEach(req.sessions, {
        field: "sessions",
        method: SessionsService.method.createSessionsBatch,
        log: deps.log,
        run: (item) => lifecycle.createForId(newSession(item)),
        ok: (sessionId) => ({ sessionId }),
        failed: (error, item) => ({ sessionId: item.sessionId, error }),
        // The batch call's own: its items carry none of their own.
        requestId: () => requestIdOf(ctx.values),
      });
      return { outcomes };
    },

    async getSession(req) {
      return { session: present(await sessionInSpace(req.spaceId, req.sessionId)) };
    },

    async listSessions(req) {
      const window = pageWindow(req.page);
      const type =
        req.type === SessionListType.ACTIVE
          ? "active"
          : req.type === SessionListType.HISTORIC
            ? "historic"
            : undefined;
      const { rows, count } = await repo.listSessions(
        db,
        {
          spaceId: requireSpaceId(req.spaceId),
          type,
          avatarId: filterUuid(req.avatarId, "avatar_id"),
          embedId: filterUuid(req.embedId, "embed_id"),
          contextId: filterUuid(req.contextId, "context_id"),
        },
        window.offset,
        window.pageSize,
      );
      return { sessions: rows.map(present), page: pageInfo(window, count) };
    },

    async startSession(req) {
      const started = await lifecycle.start(req.spaceId, req.sessionId);
      // Only a room of the deployment's is answered: a LITE caller's own room (transportA_config) is
      // the caller's to share, and its token is never handed back to whoever holds the session token.
      const room = await deps.rooms?.access(started.session, started.config);
      return {
        session: present(started.session),
        connectTicket: started.ticket,
        connectTicketExpiresAt: toTimestamp(started.ticketExpiresAt),
        transportAUrl: room?.url ?? "",
        transportAClientToken: room?.clientToken ?? "",
        transportAAgentToken: room?.agentToken ?? "",
      };
    },

    async stopSession(req) {
      const reason = reasonOf(req.reason, "USER_CLOSED");
      return { session: present(await lifecycle.stop(req.spaceId, req.sessionId, reason)) };
    },

    async keepAliveSession(req) {
      const at = req.at ? timestampDate(req.at) : undefined;
      return { session: present(await lifecycle.keepAlive(req.spaceId, req.sessionId, at)) };
    },

    async endSession(req) {
      const reason = reasonOf(req.reason, "UNKNOWN");
      const options = {
        epoch: req.pipelineEpoch,
        ...(req.at ? { at: timestampDate(req.at) } : {}),
      };
      return { session: present(await lifecycle.endByWorker(req.sessionId, reason, options)) };
    },

    async releaseSession(req) {
      if (!req.workerId) throw invalidRequest("worker_id is required", { field: "worker_id" });
      const released = await lifecycle.release(req.sessionId, req.workerId, req.pipelineEpoch);
      const workerId = released.offer ? await deps.takeover.offer(released.row) : undefined;
      const row = (await repo.findSession(db, released.row.id)) ?? released.row;
      return { session: present(row), workerId: workerId ?? "" };
    },

    async endAvatarSessions(req) {
      const reason = reasonOf(req.reason, "AVATAR_DELETED");
      return { sessionIds: await lifecycle.endAvatarSessions(req.avatarId, reason) };
    },

    async getSessionConfig(req) {
      const row = await anySession(req.sessionId);
      return { session: present(row), config: readConfig(row) };
    },

    async redeemConnectTicket(req) {
      return { session: present(await lifecycle.redeemTicket(req.ticket)) };
    },

    async reportConnectionState(req) {
      const state = connectionStateFromProto(req.state);
      if (!state) throw invalidRequest("state must be NEW, CONNECTED or DISCONNECTED", { field: "state" });
      const session = await lifecycle.reportConnection(req.sessionId, state, req.pipelineEpoch);
      return { session: present(session) };
    },

    async appendTranscript(req) {
      const session = await anySession(req.sessionId);
      if (req.entries.length > MAX_APPEND) {
        throw invalidRequest(`at most ${MAX_APPEND} entries per call`, { field: "entries" });
      }
      const at = now();
      const entries = req.entries.map((e, i) => {
        if (!(TRANSCRIPT_ROLES as readonly string[]).includes(e.role)) {
          throw invalidRequest(`entries[${i}].role must be user or avatar`, { field: "role" });
        }
        if (e.transcript.length > MAX_TRANSCRIPT_CHARS) {
          throw invalidRequest(`entries[${i}].transcript is too long`, { field: "transcript" });
        }
        const absolute = e.absoluteTimestamp > 0n ? e.absoluteTimestamp : BigInt(at.getTime());
        const relative =
          e.relativeTimestamp > 0n || !session.started_at
            ? e.relativeTimestamp
            : absolute - BigInt(session.started_at.getTime());
        return {
          entryId: e.entryId,
          role: e.role,
          transcript: e.transcript,
          absoluteTimestamp: absolute,
          relativeTimestamp: relative < 0n ? 0n : relative,
        };
      });
      const written = await db.transaction().execute(async (trx) => {
        // Under a share lock, so that a takeover cannot slip between the owner check and the write.
        const current = await repo.shareLockSession(trx, session.id);
        if (current) assertOwner(current, req.pipelineEpoch);
        const rows = await appendTranscript(trx, session.id, entries, at);
        const first = rows[0];
        if (first) {
          const event = create(TranscriptWrittenSchema, {
            sessionId: session.id,
            spaceId: session.space_id,
            entries: rows.map(transcriptEntryToProto),
          });
          await enqueueEvent(
            trx,
            topics.transcriptWritten,
            event,
            `${session.id}.transcript.${first.id}`,
            at,
          );
        }
        return rows.length;
      });
      if (written > 0) void deps.outbox.kick();
      return { written };
    },

    async getTranscript(req) {
      const session = await sessionInSpace(req.spaceId, req.sessionId);
      const window = await readTranscript(db, session.id, req.startTimestamp, req.endTimestamp);
      return {
        sessionActive: session.state !== "ENDED",
        entries: window.entries.map(transcriptEntryToProto),
        nextTimestamp: window.next,
      };
    },

    async appendSessionEvents(req) {
      const session = await anySession(req.sessionId);
      if (req.events.length > MAX_APPEND) {
        throw invalidRequest(`at most ${MAX_APPEND} events per call`, { field: "events" });
      }
      return { written: await appendSessionEvents(db, session.id, newEvents(req.events, now())) };
    },

    async appendSessionEventsBatch(req) {
      if (req.sessions.reduce((n, s) => n + s.events.length, 0) > MAX_APPEND) {
        throw invalidRequest(`at most ${MAX_APPEND} events per call`, { field: "sessions" });
      }
      const at = now();
      const groups = req.sessions.map((s, i) => {
        if (!isUuid(s.sessionId)) {
          throw invalidRequest(`sessions[${i}].session_id must be a UUID`, { field: "session_id" });
        }
        return { sessionId: s.sessionId.toLowerCase(), events: newEvents(s.events, at) };
      });
      const { written, unknown } = await appendEventsOfSessions(db, groups);
      return { written, unknownSessionIds: unknown };
    },

    async listSessionEvents(req) {
      const session = await sessionInSpace(req.spaceId, req.sessionId);
      return { events: (await listSessionEvents(db, session)).map(sessionEventToProto) };
    },

    async deleteSessionEvents(req) {
      const session = await sessionInSpace(req.spaceId, req.sessionId);
      const deleted = await db.transaction().execute((trx) => deleteSessionHistory(trx, session.id, now()));
      return { deletedEvents: deleted.events, deletedTranscriptEntries: deleted.transcriptEntries };
    },

    async getCredits(req) {
      return { creditsLeft: await ledger.balanceOf(db, requireSpaceId(req.spaceId)) };
    },

    async grantCredits(req) {
      const spaceId = requireSpaceId(req.spaceId);
      const amount = ledger.parseCreditAmount(req.amount);
      if (!amount) {
        throw invalidRequest("amount must be a positive decimal with at most 4 decimals", {
          field: "amount",
        });
      }
      const key = req.idempotencyKey.trim();
      if (key.length > MAX_IDEMPOTENCY_KEY) {
        throw invalidRequest(`idempotency_key must have at most ${MAX_IDEMPOTENCY_KEY} characters`, {
          field: "idempotency_key",
        });
      }
      const result = await db
        .transaction()
        .execute((trx) =>
          ledger.grant(trx, { spaceId, amount, note: req.note, idempotencyKey: key || null, at: now() }),
        );
      if (result.kind === "key_reused") {
        throw conflict(`idempotency_key was used for a grant of ${result.amount}`, {
          reason: "IDEMPOTENCY_KEY_REUSED",
          field: "idempotency_key",
        });
      }
      return { creditsLeft: await ledger.balanceOf(db, spaceId) };
    },

    async listLedgerEntries(req) {
      const window = pageWindow(req.page);
      const { rows, count } = await ledger.listLedger(
        db,
        { spaceId: requireSpaceId(req.spaceId), sessionId: filterUuid(req.sessionId, "session_id") },
        window.offset,
        window.pageSize,
      );
      return { entries: rows.map(ledgerEntryToProto), page: pageInfo(window, count) };
    },
  };
}
