/**
 * The event-loop delay of each backend process over a window, from its own metrics (prom-client's
 * nodejs_eventloop_lag_* gauges read a histogram that each scrape resets): read once at the start of the
 * window to reset it, once at the end for the window's figures. A stalled loop (a long GC pause, a
 * long synchronous task) delays every message of that process, so this names where a tail comes from.
 * The histogram samples every 10 ms (prom-client's default precision) and counts that interval in every
 * reading: it is taken off, so an idle process reads about 0.
 */

import { readMetricsPage } from "./metrics-page.js";

const SAMPLING_INTERVAL_MS = 10;

export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
}

const gauge = (text: string, name: string): number => {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  return match ? Math.max(0, Number(match[1]) * 1000 - SAMPLING_INTERVAL_MS) : Number.NaN;
};

async function scrape(url: string): Promise<LoopDelay> {
  const text = await readMetricsPage(url);
  if (text === undefined) return { p99Ms: Number.NaN, maxMs: Number.NaN };
  return {
    p99Ms: gauge(text, "nodejs_eventloop_lag_p99_seconds"),
    maxMs: gauge(text, "nodejs_eventloop_lag_max_seconds"),
  };
}

/** Reads (and so resets) every process's event-loop delay histogram. */
export async function readLoopDelays(urls: Record<string, string>): Promise<Map<string, LoopDelay>> {
  const entries = await Promise.all(
    Object.entries(urls).map(async ([name, url]) => [name, await scrape(url)] as const),
  );
  return new Map(entries);
}

/** "gateway 2.1/12.0 ms, pipeline ...": p99/max per process. */
export function formatLoopDelays(delays: Map<string, LoopDelay>): string {
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");
  return [...delays].map(([name, d]) => `${name} ${ms(d.p99Ms)}/${ms(d.maxMs)} ms`).join(", ");
}
