/** A backend process's Prometheus page (its METRICS_PORT), or undefined when it does not answer in 5 s. */
export async function readMetricsPage(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}
