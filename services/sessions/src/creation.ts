import { randomUUID } from "node:crypto";
import { type SessionConfig, SessionConfigSchema, SessionSource } from "@avatar/contracts/common";
import { invalidRequest, isUuid } from "@avatar/runtime";
import { toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import {
  type CreatedAnswer,
  type CreationBatch,
  insertCreated,
  type NewSessionValues,
} from "./created-insert.js";
import { admitEmbedSession } from "./embed-admission.js";
import { creditRate } from "./ledger.js";
import { modeFromProto, sourceFromProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { SessionRow, SessionsDatabase } from "./schema.js";
import type { SessionSettings } from "./settings.js";

export interface CreationDeps {
  db: Kysely<SessionsDatabase>;
  settings: SessionSettings;
  now: () => Date;
  /** Inserts concurrent creations together (group commit). */
  creations: CreationBatch;
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
export function createSession(deps: CreationDeps, input: NewSession): Promise<SessionRow>;
export function createSession(
  deps: CreationDeps,
  input: NewSession,
  answer: CreatedAnswer,
): Promise<Pick<SessionRow, "id">>;
export async function createSession(
  deps: CreationDeps,
  input: NewSession,
  answer: CreatedAnswer = "row",
): Promise<Pick<SessionRow, "id">> {
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

  // As ISO text: one string for the three columns of the moment, where pg would format each Date apart.
  const at = now.toISOString();
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
    created_at: at,
    updated_at: at,
    last_activity_at: at,
    connection_state: "NEW",
    start_deadline_at: new Date(now.getTime() + deps.settings.SESSION_START_TIMEOUT_MS).toISOString(),
  } satisfies NewSessionValues;

  const created =
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
          return (await insertCreated(trx, [values]))[0];
        })
      : await deps.creations.insert(values, answer);
  if (created) return created;
  // A retried create (the tokens service timed out waiting) answers the session it made.
  const existing = await repo.findSession(deps.db, id);
  if (existing?.space_id === spaceId) return existing;
  throw new ConnectError("a session with this id exists", Code.AlreadyExists);
}
