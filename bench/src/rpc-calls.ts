/**
 * The Connect calls the backend's services served, by procedure, from their own metrics
 * (avatar_rpc_server_requests_total, every service, procedure and code): read before and after a step,
 * the difference per operation says how many internal calls each operation makes. A count, which does
 * not drift with the host's speed as times do.
 */

const SERVED = /^avatar_rpc_server_requests_total\{([^}]*)\} (\S+)$/gm;

/** Calls served so far by procedure ("avatar.sessions.v1.SessionsService/StartSession"), summed over codes. */
export function servedCalls(metricsText: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const [, labels = "", value] of metricsText.matchAll(SERVED)) {
    const procedure = /(?:^|,)procedure="([^"]*)"/.exec(labels)?.[1];
    if (procedure) calls.set(procedure, (calls.get(procedure) ?? 0) + Number(value));
  }
  return calls;
}

/** Every process's calls served so far, added up by procedure (a process that does not answer adds none). */
export async function readServedCalls(urls: Record<string, string>): Promise<Map<string, number>> {
  const texts = await Promise.all(
    Object.values(urls).map((url) =>
      fetch(url, { signal: AbortSignal.timeout(5_000) })
        .then((res) => res.text())
        .catch(() => ""),
    ),
  );
  const total = new Map<string, number>();
  for (const text of texts) {
    for (const [procedure, n] of servedCalls(text)) total.set(procedure, (total.get(procedure) ?? 0) + n);
  }
  return total;
}

/** "SessionsService/StartSession 1.00, ...": calls per operation between two readings, the most first. */
export function callsPerOperation(
  before: Map<string, number>,
  after: Map<string, number>,
  operations: number,
): string {
  return [...after]
    .map(([procedure, n]) => [procedure, (n - (before.get(procedure) ?? 0)) / operations] as const)
    .filter(([, per]) => per >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([procedure, per]) => `${procedure.replace(/^.*\.(?=[^.]*\/)/, "")} ${per.toFixed(2)}`)
    .join(", ");
}
