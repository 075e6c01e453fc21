import { randomUUID } from "node:crypto";
import { type SessionConfig, SessionConfigSchema, SessionSource } from "@avatar/contracts/common";
import { type SessionCreated, SessionCreatedSchema } from "@avatar/contracts/sessions";
import { invalidRequest, isUuid, topics } from "@avatar/runtime";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CompiledQuery, type Insertable, type Kysely, type Transaction } from "kysely";
import { admitEmbedSession } from "./embed-admission.js";
import { creditRate } from "./ledger.js";
import { modeFromProto, sessionToProto, sourceFromProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { SessionRow, SessionsDatabase, SessionTable } from "./schema.js";
import type { SessionSettings } from "./settings.js";

export interface CreationDeps {
  db: Kysely<SessionsDatabase>;
  settings: SessionSettings;
  now: () => Date;
}

export interface NewSession {
  sessionId: string;
  spaceId: string;
  apiKeyId: string;
  config: SessionConfig | undefined;
  maxSessionDuration: number;
  /** An embed visitor's session: created only when the embed's limits and the credits allow a start. */
  embedAdmission?: { maxConcurrentSessions: number; maxSessionsPerHour: number } | undefined;
}

function optionalUuid(value: string, field: string): string | null {
  if (value === "") return null;
  if (!isUuid(value)) throw invalidRequest(`${field} must be a UUID`, { field });
  return value.toLowerCase();
}

/** The configured source; when unset, EMBED for an embed's session and API otherwise. */
function sourceOf(config: SessionConfig, embedId: string | null) {
  if (config.source !== SessionSource.UNSPECIFIED) return sourceFromProto(config.source);
  return embedId ? "EMBED" : "API";
}

/**
 * Validates and stores a new session in CREATED with its configuration, its rate, and the deadline by
 * which it must start; a sandbox session's duration is capped here. Creating an id that exists in the
 * same space answers that session (a retried call); in another space it is refused.
 */
export async function createSession(deps: CreationDeps, input: NewSession): Promise<SessionRow> {
  const spaceId = optionalUuid(input.spaceId, "space_id");
  if (!spaceId) throw invalidRequest("space_id is required", { field: "space_id" });
  const id = optionalUuid(input.sessionId, "session_id") ?? randomUUID();
  const config = input.config;
  if (!config) throw invalidRequest("config is required", { field: "config" });
  const mode = modeFromProto(config.mode);
  if (!mode) throw invalidRequest("config.mode must be FULL or LITE", { field: "config.mode" });
  const avatarId = optionalUuid(config.avatarId, "config.avatar_id");
  if (!avatarId) throw invalidRequest("config.avatar_id is required", { field: "config.avatar_id" });
  if (!Number.isInteger(input.maxSessionDuration) || input.maxSessionDuration <= 0) {
    throw invalidRequest("max_session_duration must be a positive number of seconds", {
      field: "max_session_duration",
    });
  }
  const embedId = optionalUuid(config.embedId, "config.embed_id");
  const source = sourceOf(config, embedId);
  if (!source) throw invalidRequest("config.source is not a known source", { field: "config.source" });
  const sandboxSeconds = Math.ceil(deps.settings.SESSION_SANDBOX_MAX_DURATION_MS / 1000);
  const now = deps.now();
  const admission = input.embedAdmission;
  if (admission && !embedId) {
    throw invalidRequest("embed_admission needs config.embed_id", { field: "embed_admission" });
  }

  const values = {
    id,
    space_id: spaceId,
    api_key_id: optionalUuid(input.apiKeyId, "api_key_id"),
    state: "CREATED",
    mode,
    is_sandbox: config.isSandbox,
    source,
    avatar_id: avatarId,
    embed_id: embedId,
    context_id: optionalUuid(config.contextId, "config.context_id"),
    voice_agent_id: optionalUuid(config.voiceAgentId, "config.voice_agent_id"),
    memory_id: optionalUuid(config.memoryId, "config.memory_id"),
    config: toJsonString(SessionConfigSchema, config),
    credit_rate: creditRate(mode, source, config.isSandbox),
    max_session_duration: config.isSandbox
      ? Math.min(input.maxSessionDuration, sandboxSeconds)
      : input.maxSessionDuration,
    created_at: now,
    updated_at: now,
    last_activity_at: now,
    connection_state: "NEW",
    start_deadline_at: new Date(now.getTime() + deps.settings.SESSION_START_TIMEOUT_MS),
  } satisfies NewSessionValues;

  const created = create(SessionCreatedSchema, { session: sessionToProto(storedRow(values), now) });
  const row =
    admission && embedId
      ? // An embed's visitor: admitted (limits, credits) and inserted in one transaction, one embed at a time.
        await deps.db.transaction().execute(async (trx) => {
          // A retried create of a session that exists is answered below, not admitted twice.
          if (await repo.findSession(trx, id)) return undefined;
          await admitEmbedSession(trx, {
            spaceId,
            embedId,
            creditRate: values.credit_rate,
            maxConcurrentSessions: admission.maxConcurrentSessions,
            maxSessionsPerHour: admission.maxSessionsPerHour,
            now,
          });
          return insertCreated(trx, values, created, now);
        })
      : await insertCreated(deps.db, values, created, now);
  if (row) return row;
  // A retried create (the tokens service timed out waiting) answers the session it made.
  const existing = await repo.findSession(deps.db, id);
  if (existing?.space_id === spaceId) return existing;
  throw new ConnectError("a session with this id exists", Code.AlreadyExists);
}

/**
 * The row the insert of `values` stores: the columns it leaves to their defaults as the migrations
 * define them (a test compares its announcement with the stored row's). The order number `seq` is the
 * database's and is not announced.
 */
function storedRow(values: NewSessionValues): SessionRow {
  return {
    seq: "",
    started_at: null,
    ended_at: null,
    end_reason: null,
    credits_consumed: 0,
    escrow_amount: 0,
    charged_minutes: 0,
    idle_deadline_at: null,
    max_end_at: null,
    next_charge_at: null,
    worker_id: null,
    worker_deadline_at: null,
    ...values,
    config: JSON.parse(values.config as string) as unknown,
    due_at: values.start_deadline_at ?? null,
  } as SessionRow;
}

/** The columns a new session's insert sets, in the order of its parameters. */
const NEW_SESSION_COLUMNS = [
  "id",
  "space_id",
  "api_key_id",
  "state",
  "mode",
  "is_sandbox",
  "source",
  "avatar_id",
  "embed_id",
  "context_id",
  "voice_agent_id",
  "memory_id",
  "config",
  "credit_rate",
  "max_session_duration",
  "created_at",
  "updated_at",
  "last_activity_at",
  "connection_state",
  "start_deadline_at",
] as const satisfies readonly (keyof SessionTable)[];

type NewSessionValues = Required<Pick<Insertable<SessionTable>, (typeof NEW_SESSION_COLUMNS)[number]>> & {
  id: string;
  state: "CREATED";
};

/** How many of the statement's parameters are the row's; the notice's and the event's come after them. */
const ROW_PARAMETERS = NEW_SESSION_COLUMNS.length;
/**
 * One statement, so one round trip: the row, its session.created notice and its bus event (outbox) are
 * written together or not at all. The event is published by the next outbox run (the scheduler's tick):
 * nothing waits for it, and a mint does not pay for a publishing transaction. No row when the id exists.
 *
 * Written out rather than built with kysely: a mint runs it, and building this statement cost more CPU
 * than sending it. Its text never changes, so Postgres keeps it prepared (runtime's prepared-statements).
 */
const INSERT_CREATED = `with created as (
  insert into sessions (${NEW_SESSION_COLUMNS.join(", ")})
  values (${NEW_SESSION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
  on conflict (id) do nothing
  returning *
), notice as (
  insert into session_events (id, session_id, type, payload, created_at)
  select $${ROW_PARAMETERS + 1}::uuid, created.id, 'session.created', '{}'::jsonb, $${ROW_PARAMETERS + 2}::timestamptz from created
), announced as (
  insert into outbox (subject, payload, msg_id, created_at)
  select $${ROW_PARAMETERS + 3}, $${ROW_PARAMETERS + 4}::bytea, $${ROW_PARAMETERS + 5}, $${ROW_PARAMETERS + 2}::timestamptz from created
)
select * from created`;

async function insertCreated(
  db: Kysely<SessionsDatabase> | Transaction<SessionsDatabase>,
  values: NewSessionValues,
  created: SessionCreated,
  now: Date,
): Promise<SessionRow | undefined> {
  const parameters = [
    ...NEW_SESSION_COLUMNS.map((column) => values[column]),
    randomUUID(),
    now,
    topics.sessionCreated.subject,
    Buffer.from(toBinary(SessionCreatedSchema, created)),
    `${values.id}.created`,
  ];
  const { rows } = await db.executeQuery<SessionRow>(CompiledQuery.raw(INSERT_CREATED, parameters));
  return rows[0];
}
