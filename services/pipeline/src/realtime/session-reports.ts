import {
  type ConnectionState,
  type Session,
  type SessionEndReason,
  SessionState,
  type SessionsService,
} from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { Clock } from "./clock.js";

/** What the sessions service says of a session after a report: still running, or ended (and why). */
export type Outcome = { ended: false } | { ended: true; reason: SessionEndReason };

const RUNNING: Outcome = { ended: false };
const outcomeOf = (session: Session | undefined): Outcome =>
  session?.state === SessionState.ENDED ? { ended: true, reason: session.endReason } : RUNNING;

/**
 * A runner's calls to the sessions service about its session: activity (the idle timer), the connection
 * state, the end. Failures are logged and answered as "still running", except where the answer matters.
 */
export class SessionReports {
  constructor(
    private readonly sessions: Client<typeof SessionsService>,
    private readonly session: () => Session,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** The session as the sessions service has it now. */
  async current(): Promise<Session | undefined> {
    return (await this.sessions.getSessionConfig({ sessionId: this.session().id })).session;
  }

  /** Client activity: resets the idle timer. An ended session answers 409 (FailedPrecondition). */
  async activity(): Promise<Outcome> {
    const { id, spaceId } = this.session();
    try {
      await this.sessions.keepAliveSession({ spaceId, sessionId: id });
      return RUNNING;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition)
        return outcomeOf(await this.current());
      this.log.warn("activity report failed", { err });
      return RUNNING;
    }
  }

  async connection(state: ConnectionState): Promise<Outcome> {
    try {
      const res = await this.sessions.reportConnectionState({ sessionId: this.session().id, state });
      return outcomeOf(res.session);
    } catch (err) {
      this.log.warn("connection state report failed", { err });
      return RUNNING;
    }
  }

  /**
   * Ends the session for `reason` (a few attempts); answers the reason it ended with (another one when
   * it had ended already), or undefined when the sessions service could not be reached.
   */
  async end(reason: SessionEndReason): Promise<SessionEndReason | undefined> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const { session } = await this.sessions.endSession({ sessionId: this.session().id, reason });
        return session?.endReason ?? reason;
      } catch (err) {
        this.log.warn("ending the session failed", { attempt, err });
        await new Promise<void>((resolve) => this.clock.after(300 * attempt, resolve));
      }
    }
    return undefined;
  }
}
