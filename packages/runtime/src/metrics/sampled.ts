import { Gauge, type GaugeConfiguration } from "prom-client";

/** One series of a sampled gauge: its labels and its value now. */
export interface Reading {
  labels?: Record<string, string>;
  value: number;
}

export type Sampler = () => Reading[] | Promise<Reading[]>;

const samplers = new WeakMap<Gauge, Set<Sampler>>();

/**
 * A gauge read at scrape time from whatever registered a sampler (a database count, a pool, a worker):
 * several services of one process each add theirs, and each takes its sampler away when it stops.
 * A sampler that fails (the database is down) contributes nothing to that scrape.
 */
export function sampledGauge<L extends string>(config: Omit<GaugeConfiguration<L>, "collect">): Gauge<L> {
  const gauge: Gauge<L> = new Gauge<L>({
    ...config,
    async collect() {
      const readings = await Promise.all(
        [...(samplers.get(gauge) ?? [])].map(async (sample) => {
          try {
            return await sample();
          } catch {
            return [];
          }
        }),
      );
      gauge.reset();
      for (const r of readings.flat()) {
        if (r.labels) gauge.set(r.labels as Partial<Record<L, string>>, r.value);
        else gauge.set(r.value);
      }
    },
  });
  samplers.set(gauge, new Set());
  return gauge;
}

/** Adds a sampler to a sampled gauge; the returned function removes it. */
export function sampleInto(gauge: Gauge, sampler: Sampler): () => void {
  const set = samplers.get(gauge);
  if (!set) throw new Error("not a sampled gauge");
  set.add(sampler);
  return () => set.delete(sampler);
}
