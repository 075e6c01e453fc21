/** What one injected fault did, in figures: the line `pnpm chaos` prints and the fault tests check. */
export interface FaultReport {
  fault: string;
  /** What was done to the system. */
  injected: string;
  requests: { total: number; answered: number; failed: number; byStatus: Record<string, number> };
  sessions: { survived: number; ended: number };
  minutes: { charged: number; expected: number; duplicated: number };
  /** Client messages sent and not handled by any worker (a client could not know they were lost). */
  messagesLost: number;
  /** Anything else measured (e.g. how long a takeover took). */
  figures: Record<string, number | string>;
}

export function emptyReport(fault: string, injected: string): FaultReport {
  return {
    fault,
    injected,
    requests: { total: 0, answered: 0, failed: 0, byStatus: {} },
    sessions: { survived: 0, ended: 0 },
    minutes: { charged: 0, expected: 0, duplicated: 0 },
    messagesLost: 0,
    figures: {},
  };
}

/** One line: fault, injection, requests answered / failed, sessions survived / ended, minutes. */
export function formatReport(r: FaultReport): string {
  const statuses = Object.entries(r.requests.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status}x${n}`)
    .join(" ");
  const figures = Object.entries(r.figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  return [
    r.fault.padEnd(16),
    `injected: ${r.injected}`,
    `requests ${r.requests.answered}/${r.requests.total} answered, ${r.requests.failed} failed${statuses ? ` (${statuses})` : ""}`,
    `sessions ${r.sessions.survived} survived, ${r.sessions.ended} ended`,
    `minutes charged ${r.minutes.charged}/${r.minutes.expected} expected, ${r.minutes.duplicated} twice`,
    `messages lost ${r.messagesLost}`,
    figures,
  ]
    .filter(Boolean)
    .join(" | ");
}
