import {
  type ConnectionState,
  type Session,
  type SessionEndReason,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import { errorDetailOf, type Logger } from "@avatar/runtime";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type Clock, Timer } from "./clock.js";

/** The reason the sessions service gives when a call comes from a worker that lost the session. */
const NOT_SESSION_OWNER = "NOT_SESSION_OWNER";

/** A report that did not arrive is sent again after these delays (the last one repeats). */
const RETRY_DELAYS_MS = [250, 500, 1_000, 2_000, 5_000];
/** A late end is reported for this long before it is given up (the lease then runs out). */
const END_REPORT_FOR_MS = 10 * 60_000;

export interface ReportListener {
  /** The sessions service says the session has ended (elsewhere, or by a timer). */
  ended(reason: SessionEndReason): void;
  /** The sessions service refused a call: this worker does not own the session any more. */
  lost(): void;
}

export type EndOutcome =
  | { kind: "ended"; reason: SessionEndReason }
  | { kind: "lost" }
  | { kind: "unreachable" };

/** Whether a failed call may succeed when made again (the service or the network was down). */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof ConnectError)) return true;
  return [Code.Unavailable, Code.DeadlineExceeded, Code.Unknown, Code.Internal, Code.Aborted].includes(
    err.code,
  );
}

/** The sessions service refused a call because this worker does not own the session any more. */
export const isNotOwner = (err: unknown): boolean =>
  err instanceof ConnectError && errorDetailOf(err)?.reason === NOT_SESSION_OWNER;

/**
 * A runner's calls to the sessions service about its session: activity (the idle timer), the connection
 * state, the end; each under the runner's ownership epoch, so that a worker that lost the session hears
 * so at its first call. A report that cannot be delivered (the sessions service is down) is held and sent
 * again until it is, the latest replacing what waits: activity carries the moment it happened, so
 * keep-alives sent during an outage still count, and an end carries the moment the worker stopped
 * serving, so billing stops there however late it arrives.
 */
export class SessionReports {
  private epoch = 0;
  private readonly activityReport: HeldReport<number>;
  private readonly connectionReport: HeldReport<ConnectionState>;

  constructor(
    private readonly sessions: Client<typeof SessionsService>,
    private readonly session: () => Session,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly listener: ReportListener,
  ) {
    this.activityReport = new HeldReport(clock, log, "activity report", (at) => this.sendActivity(at));
    this.connectionReport = new HeldReport(clock, log, "connection state report", (state) =>
      this.sendConnection(state),
    );
  }

  /** The ownership epoch the calls are made under (from the session the runner began with). */
  setEpoch(epoch: number): void {
    this.epoch = epoch;
  }

  /** The session as the sessions service has it now. */
  async current(): Promise<Session | undefined> {
    return (await this.sessions.getSessionConfig({ sessionId: this.session().id })).session;
  }

  /** Client activity at `at` (ms): resets the idle timer. */
  activity(at: number): void {
    this.activityReport.put(at);
  }

  connection(state: ConnectionState): void {
    this.connectionReport.put(state);
  }

  /** Stops sending held activity and connection reports (the session is over here). */
  stop(): void {
    this.activityReport.stop();
    this.connectionReport.stop();
  }

  /** Ends the session for `reason` as of `at`, once; how the sessions service took it. */
  async endOnce(reason: SessionEndReason, at: number): Promise<EndOutcome> {
    try {
      const { session } = await this.sessions.endSession({
        sessionId: this.session().id,
        reason,
        at: timestampFromMs(at),
        pipelineEpoch: this.epoch,
      });
      return { kind: "ended", reason: session?.endReason ?? reason };
    } catch (err) {
      if (isNotOwner(err)) return { kind: "lost" };
      this.log.warn("ending the session failed", { err });
      return isTransient(err) ? { kind: "unreachable" } : { kind: "ended", reason };
    }
  }

  /** Reports the end until it is delivered (or for END_REPORT_FOR_MS). */
  async endUntilDelivered(reason: SessionEndReason, at: number): Promise<void> {
    const giveUpAt = this.clock.now() + END_REPORT_FOR_MS;
    for (let attempt = 0; this.clock.now() < giveUpAt; attempt++) {
      await sleep(this.clock, retryDelay(attempt));
      if ((await this.endOnce(reason, at)).kind !== "unreachable") return;
    }
    this.log.error("the session's end could not be reported; its lease runs out instead");
  }

  private async sendActivity(at: number): Promise<void> {
    const { id, spaceId } = this.session();
    try {
      await this.sessions.keepAliveSession({ spaceId, sessionId: id, at: timestampFromMs(at) });
    } catch (err) {
      // An ended session answers 409 (FailedPrecondition).
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) {
        const session = await this.current().catch(() => undefined);
        if (session?.state === SessionState.ENDED) this.listener.ended(session.endReason);
        return;
      }
      throw err;
    }
  }

  private async sendConnection(state: ConnectionState): Promise<void> {
    try {
      const res = await this.sessions.reportConnectionState({
        sessionId: this.session().id,
        state,
        pipelineEpoch: this.epoch,
      });
      if (res.session?.state === SessionState.ENDED) this.listener.ended(res.session.endReason);
    } catch (err) {
      if (isNotOwner(err)) return this.listener.lost();
      throw err;
    }
  }
}

/**
 * The latest value of one kind of report, sent until it is delivered: a failed send that may succeed
 * later is retried with growing delays; a newer value replaces one still waiting.
 */
class HeldReport<T> {
  private waiting: { value: T } | undefined;
  private sending = false;
  private attempt = 0;
  private stopped = false;
  private readonly retry: Timer;

  constructor(
    clock: Clock,
    private readonly log: Logger,
    private readonly what: string,
    private readonly send: (value: T) => Promise<void>,
  ) {
    this.retry = new Timer(clock);
  }

  put(value: T): void {
    if (this.stopped) return;
    this.waiting = { value };
    if (!this.sending && !this.retry.armed) void this.flush();
  }

  stop(): void {
    this.stopped = true;
    this.retry.clear();
    this.waiting = undefined;
  }

  private async flush(): Promise<void> {
    const next = this.waiting;
    if (!next || this.stopped) return;
    this.waiting = undefined;
    this.sending = true;
    try {
      await this.send(next.value);
      this.attempt = 0;
    } catch (err) {
      if (isTransient(err) && !this.stopped) {
        if (this.attempt === 0) this.log.warn(`${this.what} not delivered; holding it`, { err });
        this.waiting ??= next;
        this.retry.arm(retryDelay(this.attempt++), () => void this.flush());
      } else {
        this.log.warn(`${this.what} refused`, { err });
      }
    } finally {
      this.sending = false;
    }
    if (this.waiting && !this.retry.armed) void this.flush();
  }
}

function retryDelay(attempt: number): number {
  return RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)] ?? 5_000;
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.after(ms, resolve));
}
