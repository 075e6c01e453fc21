import type { BusStatus } from "@avatar/bus";

export interface JudgmentDeps {
  busStatus: () => BusStatus;
  now: () => Date;
  /** SESSIONS_OUTAGE_BOUND_MS */
  outageBoundMs: number;
  /** SESSIONS_RECOVERY_GRACE_MS */
  graceMs: number;
}

/**
 * Whether this replica may judge sessions on the reports it should have received from the workers
 * (heartbeats renewing leases, client activity resetting the idle timer). Not while its bus is down or
 * its database fails (those reports could not arrive or be recorded), up to the outage bound; and not
 * during a grace period after it started or recovered, so that the reports held during the outage (the
 * workers re-send them) arrive before anyone is judged on them. Charges and the maximum duration do not
 * depend on it.
 */
export class Judgment {
  private busDownSince: number | undefined;
  private databaseFailingSince: number | undefined;
  private graceUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: JudgmentDeps) {}

  /** The service has (re)started: the reports of the time it was down may still arrive. */
  started(): void {
    this.recovered(this.time());
  }

  /** A database operation failed for lack of a connection. */
  databaseFailed(): void {
    this.databaseFailingSince ??= this.time();
  }

  /** A database operation succeeded. */
  databaseWorks(): void {
    if (this.databaseFailingSince === undefined) return;
    this.databaseFailingSince = undefined;
    this.recovered(this.time());
  }

  judge(): boolean {
    const t = this.time();
    this.followBus(t);
    const downSince = Math.min(
      this.busDownSince ?? Number.POSITIVE_INFINITY,
      this.databaseFailingSince ?? Number.POSITIVE_INFINITY,
    );
    if (downSince !== Number.POSITIVE_INFINITY) return t - downSince >= this.deps.outageBoundMs;
    return t >= this.graceUntil;
  }

  private followBus(t: number): void {
    if (this.deps.busStatus() !== "connected") {
      this.busDownSince ??= t;
    } else if (this.busDownSince !== undefined) {
      this.busDownSince = undefined;
      this.recovered(t);
    }
  }

  private recovered(t: number): void {
    this.graceUntil = Math.max(this.graceUntil, t + this.deps.graceMs);
  }

  private time(): number {
    return this.deps.now().getTime();
  }
}
