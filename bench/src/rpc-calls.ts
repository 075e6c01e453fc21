/**
 * The Connect calls the backend's services served, by procedure, from their own metrics
 * (avatar_rpc_server_requests_total, every service, procedure and code): read before and after a step,
 * the difference per operation says how many internal calls each operation makes. A count, which does
 * not drift with the host's speed as times do.
 */

import { readMetricsPage } from "./metrics-page.js";

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

/** Calls served so far, added up over processes, and the processes whose metrics did not answer. */
export interface ServedCalls {
  calls: Map<string, number>;
  /** Their calls are missing from `calls`: a reading with any is short. */
  silent: string[];
}

/** Every process's calls served so far, added up by procedure, from its metrics URL (name -> URL). */
export async function readServedCalls(urls: Record<string, string>): Promise<ServedCalls> {
  const texts = await Promise.all(
    Object.entries(urls).map(async ([name, url]) => ({ name, text: await readMetricsPage(url) })),
  );
  const calls = new Map<string, number>();
  const silent: string[] = [];
  for (const { name, text } of texts) {
    if (text === undefined) {
      silent.push(name);
      continue;
    }
    for (const [procedure, n] of servedCalls(text)) calls.set(procedure, (calls.get(procedure) ?? 0) + n);
  }
  return { calls, silent };
}

/** "SessionsService/StartSession 1.00, ...": calls per operation between two readings, the most first. */
export function callsPerOperation(before: ServedCalls, after: ServedCalls, operations: number): string {
  const silent = [...new Set([...before.silent, ...after.silent])];
  const per = [...after.calls]
    .map(([procedure, n]) => [procedure, (n - (before.calls.get(procedure) ?? 0)) / operations] as const)
    .filter(([, per]) => per >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([procedure, per]) => `${procedure.replace(/^.*\.(?=[^.]*\/)/, "")} ${per.toFixed(2)}`)
    .join(", ");
  return silent.length === 0 ? per : `${per} (without ${silent.join(", ")}: no metrics)`;
}
