import { type SessionConfig, SessionConfigSchema } from "@avatar/contracts/common";
import { SessionStartedSchema } from "@avatar/contracts/sessions";
import type { EndReasonName, OutboxPublisher } from "@avatar/runtime";
import {
  conflict,
  creditsCharged,
  enqueuedEvents,
  insufficientCredits,
  invalidRequest,
  isUuid,
  notFound,
  standalone,
  topics,
  unauthenticated,
} from "@avatar/runtime";
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Kysely, sql, type Transaction, type Updateable } from "kysely";
import type { CreationBatch } from "./created-insert.js";
import { createSession, type NewSession } from "./creation.js";
import { chargeMinute, holdEscrow, releaseEscrow, settleEscrowAsFirstMinute } from "./ledger.js";
import { sessionToProto } from "./mapping.js";
import { countTransition } from "./metrics.js";
import type { VersionedRow } from "./repository.js";
import * as repo from "./repository.js";
import type { ConnectionStateValue, SessionRow, SessionsDatabase, SessionTable } from "./schema.js";
import type { SessionSettings } from "./settings.js";
import { issueTicket, type NewTicket, newTicket, redeemTicket } from "./tickets.js";
import { nextDueStep } from "./timers.js";
import { announcement, endOf, endSession, endsAlone, offerToOtherWorkers, settle } from "./transitions.js";

type Trx = Transaction<SessionsDatabase>;

export interface LifecycleDeps {
  db: Kysely<SessionsDatabase>;
  /** Inserts concurrent creations together (created-insert.ts). */
  creations: CreationBatch;
  settings: SessionSettings;
  outbox: OutboxPublisher;
  now: () => Date;
  /**
   * Runs between the two steps of a start, while one minute is held in escrow: the pipeline worker
   * assignment (pipeline-assignment.ts). When it throws, the escrow is released and the start fails.
   */
  beforeStartCompletes?: (session: SessionRow) => Promise<StartPreparation | undefined>;
  /** Whether sessions may be judged on reports now (judgment.ts); always, when absent. */
  judge?: () => boolean;
}

/** What the step before a start's completion settled. */
export interface StartPreparation {
  /** The pipeline worker that claimed the session; its heartbeats keep the session alive from now on. */
  workerId?: string;
}

export interface StartedSession {
  session: SessionRow;
  config: SessionConfig;
  ticket: string;
  ticketExpiresAt: Date;
}

const sessionNotFound = () => notFound("Session not found", { field: "session_id" });
const sessionEnded = () => conflict("Session has ended", { reason: "SESSION_ENDED", field: "session_id" });
export const NOT_SESSION_OWNER = "NOT_SESSION_OWNER";
const notOwner = () =>
  conflict("This worker does not own the session (it moved to another worker)", {
    reason: NOT_SESSION_OWNER,
    field: "pipeline_epoch",
  });

/** A call a worker made under an ownership epoch that is not the session's current one is refused. */
export function assertOwner(row: Pick<SessionRow, "worker_epoch">, epoch: number | undefined): void {
  if (epoch && row.worker_epoch !== epoch) throw notOwner();
}

/** `at` within [from, now]: a late report cannot move a session's clock backwards or ahead. */
function clamp(at: Date | undefined, from: Date | null, now: Date): Date {
  if (!at) return now;
  const t = Math.min(now.getTime(), Math.max(at.getTime(), from?.getTime() ?? at.getTime()));
  return new Date(t);
}

/**
 * The session lifecycle: CREATED -> STARTED -> ENDED. Every operation on one session locks its row and
 * first brings its timers up to date, so an operation never acts on a session that should already have
 * ended, and concurrent operations on one session take turns.
 */
export class SessionLifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  private get settings() {
    return this.deps.settings;
  }

  /** Where a statement that stands alone goes: the runtime's pipelined connections (`standalone`). */
  private get alone(): Kysely<SessionsDatabase> {
    return standalone(this.deps.db);
  }

  private due() {
    return { judge: this.deps.judge?.() ?? true };
  }

  /**
   * One transaction; when it put an event in the outbox, a publishing run follows at once (the others,
   * most of them keep-alives, leave the outbox alone: the scheduler's tick catches anything missed).
   */
  private async transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    let used: Trx | undefined;
    try {
      return await this.deps.db.transaction().execute((trx) => {
        used = trx;
        return fn(trx);
      });
    } finally {
      if (used && enqueuedEvents(used)) void this.deps.outbox.kick();
    }
  }

  /**
   * Runs `fn` on the locked, settled session; NotFound for an unknown id or another space's session.
   * When `fn` refuses (throws), what settling did still commits: a session whose deadline has passed
   * stays ended even though the operation that noticed it failed.
   */
  private async withSession<T>(
    sessionId: string,
    spaceId: string | undefined,
    fn: (trx: Trx, row: SessionRow, now: Date) => Promise<T>,
  ): Promise<T> {
    if (!isUuid(sessionId) || (spaceId !== undefined && !isUuid(spaceId))) throw sessionNotFound();
    const outcome = await this.transaction(async (trx) => {
      const locked = await repo.lockSession(trx, sessionId);
      if (!locked || (spaceId !== undefined && locked.space_id !== spaceId.toLowerCase())) {
        throw sessionNotFound();
      }
      const now = this.deps.now();
      const row = await settle(trx, locked, now, this.settings, this.due());
      // Settling wrote nothing (most operations): a refusal may roll back the whole transaction.
      if (row === locked) return { ok: true as const, value: await fn(trx, row, now) };
      return attempt(trx, () => fn(trx, row, now));
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Creates a session in CREATED (the tokens service calls this when it mints a token). */
  create(input: NewSession): Promise<SessionRow> {
    return createSession(this.deps, input);
  }

  /** As `create`, answering only the session's id (a batch of creations needs no more). */
  async createForId(input: NewSession): Promise<string> {
    return (await createSession(this.deps, input, "id")).id;
  }

  /**
   * CREATED -> STARTED, in two steps around `beforeStartCompletes`: first one minute at the session's rate
   * is held in escrow (402 when the balance cannot cover it), then the start completes and the escrow
   * becomes the charge of minute 0. Starting a started session answers it again with a fresh ticket;
   * concurrent starts make one transition.
   */
  async start(spaceId: string, sessionId: string): Promise<StartedSession> {
    const first =
      (await this.unlocked(sessionId, spaceId, (row, now) => this.holdUnlocked(row, now))) ??
      (await this.withSession(sessionId, spaceId, async (trx, row, now) => {
        if (row.state === "ENDED") throw sessionEnded();
        if (row.state === "STARTED") return this.answerStart(trx, row, now);
        if (row.credit_rate > 0 && row.escrow_amount === 0) {
          // Last: the hold locks the space's balance until the commit.
          const held = await holdEscrow(trx, this.money(row, now), this.holdChanges(row, now));
          if (!held) throw insufficientCredits();
          return held;
        }
        return row;
      }));
    if ("ticket" in first) return first;

    let prepared: StartPreparation | undefined;
    if (this.deps.beforeStartCompletes) {
      try {
        prepared = await this.deps.beforeStartCompletes(first);
      } catch (err) {
        await this.withSession(sessionId, spaceId, async (trx, row, now) => {
          if (row.state !== "CREATED" || row.escrow_amount === 0) return;
          await releaseEscrow(trx, {
            spaceId: row.space_id,
            sessionId: row.id,
            amount: row.escrow_amount,
            at: now,
          });
          await repo.updateSession(trx, row.id, { escrow_amount: 0, updated_at: now });
        });
        throw err;
      }
    }

    // The row the first step left, unless something changed it since (then under the row's lock).
    const quick =
      "version" in first ? await this.completeUnlocked(first as VersionedRow, prepared) : undefined;
    if (quick) return quick;
    return this.withSession(sessionId, spaceId, async (trx, row, now) => {
      if (row.state === "ENDED") throw sessionEnded();
      if (row.state === "STARTED") return this.answerStart(trx, row, now);
      if (row.escrow_amount === 0 && row.credit_rate > 0) {
        // A concurrent start that failed released the escrow in between: pay minute 0 directly.
        if ((await chargeMinute(trx, { ...this.money(row, now), minuteIndex: 0 })) === "insufficient") {
          throw insufficientCredits();
        }
      }
      const completion = this.completion(trx, row, prepared, now);
      const started = await repo.updateSessionWith(trx, row.id, completion.changes, completion.inserts);
      return this.completed(started, row.escrow_amount, completion.ticket);
    });
  }

  private money(row: SessionRow, now: Date) {
    return { spaceId: row.space_id, sessionId: row.id, amount: row.credit_rate, at: now };
  }

  private holdChanges(row: SessionRow, now: Date) {
    return { escrow_amount: row.credit_rate, updated_at: now } satisfies Updateable<SessionTable>;
  }

  /** The first step of a start as one statement: the hold, or the row as it is when none is needed. */
  private holdUnlocked(row: VersionedRow, now: Date) {
    if (row.state !== "CREATED") return undefined;
    if (!(row.credit_rate > 0 && row.escrow_amount === 0)) return async () => row;
    // Undefined when the balance cannot cover it too: the locked path says so (402).
    return (db: Kysely<SessionsDatabase>) =>
      holdEscrow(db, this.money(row, now), this.holdChanges(row, now), row.version);
  }

  /** The second step of a start as one statement, on the row the first step left (undefined if it cannot). */
  private async completeUnlocked(
    row: VersionedRow,
    prepared: StartPreparation | undefined,
  ): Promise<StartedSession | undefined> {
    const now = this.deps.now();
    if (row.state !== "CREATED" || nextDueStep(row, now, this.due())) return undefined;
    // Minute 0 is the escrow held, or free: anything else is paid under the lock.
    if (row.escrow_amount === 0 && row.credit_rate > 0) return undefined;
    const completion = this.completion(undefined, row, prepared, now);
    const started = await repo.updateIfVersion(this.alone, row, completion.changes, completion.inserts);
    if (!started) return undefined;
    void this.deps.outbox.kick();
    return this.completed(started, row.escrow_amount, completion.ticket);
  }

  /**
   * CREATED -> STARTED: the row's changes and the rows written with them: the escrow held turned into
   * minute 0's charge (when one is held; otherwise minute 0 is free or the caller paid it), the notice,
   * the event and the connect ticket.
   */
  private completion(
    trx: Trx | undefined,
    row: SessionRow,
    prepared: StartPreparation | undefined,
    now: Date,
  ) {
    const s = this.settings;
    const lengthMs = row.is_sandbox
      ? Math.min(row.max_session_duration * 1000, s.SESSION_SANDBOX_MAX_DURATION_MS)
      : row.max_session_duration * 1000;
    const changes = {
      state: "STARTED",
      started_at: now,
      updated_at: now,
      last_activity_at: now,
      escrow_amount: 0,
      credits_consumed: row.credit_rate,
      charged_minutes: row.credit_rate > 0 ? 1 : 0,
      start_deadline_at: null,
      idle_deadline_at: new Date(now.getTime() + s.SESSION_IDLE_TIMEOUT_MS),
      max_end_at: new Date(now.getTime() + lengthMs),
      next_charge_at: row.credit_rate > 0 ? new Date(now.getTime() + s.SESSION_MINUTE_MS) : null,
      worker_id: prepared?.workerId ?? null,
      worker_epoch: prepared?.workerId ? 1 : 0,
      worker_seen_at: prepared?.workerId ? now : null,
      worker_deadline_at: prepared?.workerId ? new Date(now.getTime() + s.PIPELINE_WORKER_TIMEOUT_MS) : null,
    } satisfies Updateable<SessionTable>;
    const announced = repo.changedRow(row, changes);
    const ticket = newTicket(row.id, now, s.SESSION_CONNECT_TICKET_TTL_MS);
    const settlement =
      row.escrow_amount > 0
        ? [settleEscrowAsFirstMinute({ ...this.money(row, now), amount: row.escrow_amount })]
        : [];
    const inserts = [
      ...settlement,
      ...announcement(
        trx,
        announced,
        { type: "session.started", payload: {} },
        {
          topic: topics.sessionStarted,
          value: create(SessionStartedSchema, { session: sessionToProto(announced, now) }),
          msgId: `${row.id}.started`,
        },
        now,
      ),
      ticket.insert,
    ];
    return { changes, inserts, ticket };
  }

  /** A start made: counted, and answered with its ticket. */
  private completed(started: SessionRow, escrowSettled: number, ticket: NewTicket): StartedSession {
    if (escrowSettled > 0) creditsCharged.inc(escrowSettled);
    countTransition(started, "session.started");
    return {
      session: started,
      config: readConfig(started),
      ticket: ticket.ticket,
      ticketExpiresAt: ticket.expiresAt,
    };
  }

  private async answerStart(trx: Trx, row: SessionRow, now: Date): Promise<StartedSession> {
    const { ticket, expiresAt } = await issueTicket(
      trx,
      row.id,
      now,
      this.settings.SESSION_CONNECT_TICKET_TTL_MS,
    );
    return { session: row, config: readConfig(row), ticket, ticketExpiresAt: expiresAt };
  }

  /** Ends the session (USER_CLOSED unless told otherwise); an ended session is answered as it ended. */
  async stop(spaceId: string | undefined, sessionId: string, reason: EndReasonName = "USER_CLOSED") {
    const quick = await this.unlocked(sessionId, spaceId, (row, now) => {
      if (row.state === "ENDED") return async () => row;
      // Served up to now (its worker is not lost), nothing to charge or give back: the end alone.
      if (row.takeover_deadline_at !== null || !endsAlone(row, now)) return undefined;
      return async (db) => {
        const end = endOf(undefined, row, reason, now, now);
        const ended = await repo.updateIfVersion(db, row, end.changes, end.inserts);
        if (ended) {
          countTransition(ended, "session.ended");
          void this.deps.outbox.kick();
        }
        return ended;
      };
    });
    return (
      quick ??
      this.withSession(sessionId, spaceId, async (trx, row, now) =>
        row.state === "ENDED" ? row : this.endNow(trx, row, reason, now, now),
      )
    );
  }

  /**
   * The common case of an operation as one statement, without a transaction or a lock. The row is read
   * with its version; when nothing is due on it, `plan` may answer how to do the operation on that
   * version: one statement made on condition that the row is still that version (repository's
   * updateIfVersion), answering undefined when it was not. Undefined from here (no such row, another
   * space's, something due, no plan, or the row changed since it was read) sends the caller to the
   * locked path, which decides again.
   */
  private async unlocked<T>(
    sessionId: string,
    spaceId: string | undefined,
    plan: (
      row: VersionedRow,
      now: Date,
    ) => ((db: Kysely<SessionsDatabase>) => Promise<T | undefined>) | undefined,
  ): Promise<T | undefined> {
    if (!isUuid(sessionId) || (spaceId !== undefined && !isUuid(spaceId))) return undefined;
    const row = await repo.findVersioned(this.alone, sessionId);
    if (!row || (spaceId !== undefined && row.space_id !== spaceId.toLowerCase())) return undefined;
    const now = this.deps.now();
    if (nextDueStep(row, now, this.due())) return undefined;
    return plan(row, now)?.(this.alone);
  }

  /**
   * A worker ends its session: as `stop`, refused when `epoch` is not the current owner's, and at `at`
   * (when the worker stopped serving it, reported late) rather than now.
   */
  endByWorker(sessionId: string, reason: EndReasonName, options: { at?: Date; epoch?: number }) {
    return this.withSession(sessionId, undefined, async (trx, row, now) => {
      if (row.state === "ENDED") return row;
      assertOwner(row, options.epoch);
      return this.endNow(trx, row, reason, clamp(options.at, row.started_at, now), now);
    });
  }

  /** An end asked for now: the session was served up to `at` unless its worker is known to be lost. */
  private endNow(trx: Trx, row: SessionRow, reason: EndReasonName, at: Date, now: Date) {
    const vouched = row.takeover_deadline_at === null;
    return endSession(trx, row, reason, at, now, this.settings, { vouched });
  }

  /**
   * Resets the idle timer of a started session from `at` (activity reported late) or now; 409 once it
   * has ended.
   */
  keepAlive(spaceId: string, sessionId: string, at?: Date) {
    return this.withSession(sessionId, spaceId, async (trx, row, now) => {
      if (row.state === "ENDED") throw sessionEnded();
      return this.recordActivity(trx, row, clamp(at, row.last_activity_at, now), now, {});
    });
  }

  /** The pipeline's report of the realtime connection; it counts as activity while the session runs. */
  reportConnection(sessionId: string, state: ConnectionStateValue, epoch?: number) {
    return this.withSession(sessionId, undefined, async (trx, row, now) => {
      assertOwner(row, epoch);
      if (row.state === "ENDED") {
        return repo.updateSession(trx, row.id, { connection_state: state, updated_at: now });
      }
      return this.recordActivity(trx, row, now, now, { connection_state: state });
    });
  }

  /**
   * A stopping worker hands its session over: from now on it is offered to the other workers (as when
   * a worker is lost). Answers the row, and whether the caller should make the first offer now.
   */
  release(sessionId: string, workerId: string, epoch: number) {
    return this.withSession(sessionId, undefined, async (trx, row, now) => {
      if (row.state !== "STARTED") return { row, offer: false };
      if (row.worker_id !== workerId) throw notOwner();
      assertOwner(row, epoch);
      if (row.takeover_deadline_at) return { row, offer: false };
      await offerToOtherWorkers(trx, row, now, this.settings);
      return { row: await repo.updateSession(trx, row.id, { takeover_attempt_at: now }), offer: true };
    });
  }

  /**
   * Takes the next offer of a session waiting for a new worker (none is made by another replica within
   * PIPELINE_TAKEOVER_RETRY_MS); answers the row, or undefined when there is nothing to offer.
   */
  async claimTakeoverOffer(sessionId: string): Promise<SessionRow | undefined> {
    const now = this.deps.now();
    const retryBefore = new Date(now.getTime() - this.settings.PIPELINE_TAKEOVER_RETRY_MS);
    return this.deps.db
      .updateTable("sessions")
      .set({ takeover_attempt_at: now })
      .where("id", "=", sessionId)
      .where("state", "=", "STARTED")
      .where("takeover_deadline_at", "is not", null)
      .where((eb) =>
        eb.or([eb("takeover_attempt_at", "is", null), eb("takeover_attempt_at", "<=", retryBefore)]),
      )
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Records `workerId` as the session's new owner under the next epoch, if the session is still waiting
   * for one at `expectedEpoch` (a compare-and-set: of two workers offered it, one wins; an owner that came
   * back in time keeps it). Answers the row when it was recorded.
   */
  recordTakeover(sessionId: string, workerId: string, expectedEpoch: number) {
    return this.withSession(sessionId, undefined, async (trx, row, now) => {
      if (row.state !== "STARTED" || !row.takeover_deadline_at || row.worker_epoch !== expectedEpoch) {
        return undefined;
      }
      return repo.updateSession(trx, row.id, {
        worker_id: workerId,
        worker_epoch: row.worker_epoch + 1,
        worker_deadline_at: new Date(now.getTime() + this.settings.PIPELINE_WORKER_TIMEOUT_MS),
        takeover_deadline_at: null,
        takeover_attempt_at: null,
        updated_at: now,
      });
    });
  }

  /** Exchanges a ws_url ticket (once) for its session; an ended session cannot be joined. */
  async redeemTicket(ticket: string): Promise<SessionRow> {
    if (!ticket) throw unauthenticated("Invalid connect ticket");
    const outcome = await this.transaction(async (trx) => {
      const now = this.deps.now();
      const sessionId = await redeemTicket(trx, ticket, now);
      if (!sessionId) throw unauthenticated("Invalid, used or expired connect ticket");
      const locked = await repo.lockSession(trx, sessionId);
      if (!locked) throw unauthenticated("Invalid, used or expired connect ticket");
      const row = await settle(trx, locked, now, this.settings, this.due());
      return attempt(trx, async () => {
        if (row.state === "ENDED") throw new ConnectError("Session has ended", Code.FailedPrecondition);
        return this.recordActivity(trx, row, now, now, {});
      });
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Activity at `at` (now, or earlier for a late report): the idle timeout counts from the latest. */
  private recordActivity(
    trx: Trx,
    row: SessionRow,
    at: Date,
    now: Date,
    extra: { connection_state?: ConnectionStateValue },
  ) {
    const latest = at.getTime() > row.last_activity_at.getTime() ? at : row.last_activity_at;
    const idle = new Date(latest.getTime() + this.settings.SESSION_IDLE_TIMEOUT_MS);
    return repo.updateSession(trx, row.id, {
      ...extra,
      last_activity_at: latest,
      updated_at: now,
      ...(row.state === "STARTED" ? { idle_deadline_at: idle } : {}),
    });
  }

  /** Ends every session still running on an avatar; answers the ids this call ended. */
  async endAvatarSessions(avatarId: string, reason: EndReasonName): Promise<string[]> {
    if (!isUuid(avatarId)) throw invalidRequest("avatar_id must be a UUID", { field: "avatar_id" });
    const ended: string[] = [];
    for (const id of await repo.runningSessionIdsOnAvatar(this.deps.db, avatarId.toLowerCase())) {
      const wasRunning = await this.withSession(id, undefined, async (trx, row, now) => {
        if (row.state === "ENDED") return false;
        await this.endNow(trx, row, reason, now, now);
        return true;
      });
      if (wasRunning) ended.push(id);
    }
    return ended;
  }

  /**
   * The scheduler's unit of work: applies the due timers of one session if it is still due and no one
   * else holds it. Answers false when there was nothing to do here (another replica has it).
   */
  settleDue(sessionId: string): Promise<boolean> {
    return this.transaction(async (trx) => {
      const now = this.deps.now();
      const row = await repo.claimDueSession(trx, sessionId, now);
      if (!row) return false;
      await settle(trx, row, now, this.settings, this.due());
      return true;
    });
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Runs `fn` inside a savepoint: when it throws, its writes are undone and the transaction goes on. */
async function attempt<T>(trx: Trx, fn: () => Promise<T>): Promise<Outcome<T>> {
  await sql`savepoint operation`.execute(trx);
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    await sql`rollback to savepoint operation`.execute(trx);
    return { ok: false, error };
  }
}

/** The stored configuration (proto JSON) as the pipeline reads it. */
export function readConfig(row: SessionRow): SessionConfig {
  return fromJson(SessionConfigSchema, row.config as JsonValue, { ignoreUnknownFields: true });
}
