/** Shared setup of the sessions tests: a migrated `sessions` schema and the service on a hand-moved clock. */
import { randomUUID } from "node:crypto";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { type SessionConfig, SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import { SessionsService } from "@avatar/contracts/sessions";
import {
  connectInterceptors,
  createClients,
  DEFAULT_PIPELINE_CONNECTIONS,
  type Env,
  errorDetailOf,
  type Logger,
  silentLogger,
} from "@avatar/runtime";
import { openServiceDb, type ServiceTestDb, testIdentity } from "@avatar/testkit";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { type Client, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import type { NewSessionValues } from "../src/created-insert.js";
import { build, type SessionsApp, type SessionsOptions } from "../src/index.js";
import { migrations } from "../src/migrations/index.js";
import type { SessionsDatabase } from "../src/schema.js";

export const SPACE_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const SPACE_B = "bbbbbbbb-0000-4000-8000-000000000002";
export const AVATAR = "a0a0a0a0-0000-4000-8000-000000000001";
export const API_KEY_ID = "cccccccc-0000-4000-8000-000000000003";

export const MINUTE = 60_000;

/** The sessions service on its own: no pipeline workers to assign (the suite tests run them). */
export const noPipeline = { SESSIONS_REQUIRE_PIPELINE: "false" };

/** A clock that moves only when told. */
export class TestClock {
  private t: number;
  constructor(start = Date.parse("2026-11-22T10:00:00.000Z")) {
    this.t = start;
  }
  now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

export type SessionsTestDb = ServiceTestDb<SessionsDatabase>;

/** A new LITE session in SPACE_A at a fresh TestClock's time: the columns its insert takes. */
export function newSessionValues(fields: Partial<NewSessionValues> = {}): NewSessionValues {
  const now = new TestClock().now();
  return {
    id: randomUUID(),
    space_id: SPACE_A,
    api_key_id: null,
    state: "CREATED",
    mode: "LITE",
    is_sandbox: false,
    source: "API",
    avatar_id: AVATAR,
    embed_id: null,
    context_id: null,
    voice_agent_id: null,
    memory_id: null,
    config: "{}",
    credit_rate: 1,
    max_session_duration: 600,
    created_at: now,
    updated_at: now,
    last_activity_at: now,
    connection_state: "NEW",
    start_deadline_at: new Date(now.getTime() + 60_000),
    ...fields,
  };
}

/** A database of this test file with the sessions schema migrated, pipelined as the service opens it. */
export const openSessionsDb = (): Promise<SessionsTestDb> =>
  openServiceDb<SessionsDatabase>("sessions", migrations, 8, DEFAULT_PIPELINE_CONNECTIONS);

export interface Harness {
  app: SessionsApp;
  client: Client<typeof SessionsService>;
  clock: TestClock;
  bus: Bus;
  db: Kysely<SessionsDatabase>;
}

/**
 * The service built on `db` with a manual clock and no timer loop (tests call `app.scheduler.runOnce()`),
 * reached through an in-process Connect transport with the services' interceptors.
 */
export function harness(
  db: Kysely<SessionsDatabase>,
  options: { env?: Env; clock?: TestClock; log?: Logger } & Omit<
    SessionsOptions,
    "now" | "manualScheduler"
  > = {},
): Harness {
  const clock = options.clock ?? new TestClock();
  const log = options.log ?? silentLogger;
  const bus = createMemoryBus();
  const app = build(
    // These tests run no pipeline: starts complete without a worker assignment.
    {
      db,
      bus,
      log,
      clients: createClients({}, testIdentity("sessions")),
      env: { ...noPipeline, ...options.env },
    },
    {
      now: clock.now,
      manualScheduler: true,
      ...(options.beforeStartCompletes ? { beforeStartCompletes: options.beforeStartCompletes } : {}),
    },
  );
  const transport = createRouterTransport((router) => app.routes(router), {
    router: { interceptors: connectInterceptors(log, "sessions") },
  });
  return { app, client: createClient(SessionsService, transport), clock, bus, db };
}

export function config(overrides: MessageInitShape<typeof SessionConfigSchema> = {}): SessionConfig {
  return create(SessionConfigSchema, { mode: SessionMode.FULL, avatarId: AVATAR, ...overrides });
}

/** Creates a session through the RPC the tokens service uses. */
export async function newSession(
  client: Client<typeof SessionsService>,
  options: { spaceId?: string; config?: SessionConfig; maxSessionDuration?: number } = {},
) {
  const res = await client.createSession({
    sessionId: randomUUID(),
    spaceId: options.spaceId ?? SPACE_A,
    apiKeyId: API_KEY_ID,
    config: options.config ?? config(),
    maxSessionDuration: options.maxSessionDuration ?? 3600,
  });
  if (!res.session) throw new Error("no session in the answer");
  return res.session;
}

/** The ConnectError a call fails with (the test fails if it succeeds). */
export async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** The reason in a domain error's detail (e.g. NOT_SESSION_OWNER). */
export const errorReason = (err: ConnectError): string | undefined => errorDetailOf(err)?.reason;

/** The space's ledger as [kind, amount, minute] rows, oldest first. */
export async function ledgerOf(db: Kysely<SessionsDatabase>, spaceId: string, sessionId?: string) {
  let q = db.selectFrom("ledger").select(["kind", "amount", "minute_index"]).where("space_id", "=", spaceId);
  if (sessionId) q = q.where("session_id", "=", sessionId);
  const rows = await q.orderBy("id").execute();
  return rows.map((r) => [r.kind, Number(r.amount), r.minute_index] as const);
}

/** The value, or a failed test when it is missing. */
export function defined<T>(value: T | null | undefined, what = "value"): T {
  if (value === null || value === undefined) throw new Error(`${what} is missing`);
  return value;
}

/** A timestamp in Unix milliseconds (a failed test when it is missing). */
export const ms = (ts: Timestamp | undefined): number => timestampDate(defined(ts, "timestamp")).getTime();

export { eventually } from "@avatar/testkit";
