import { Counter, type CounterConfiguration } from "prom-client";

/** One series of a tallied counter: add to `n`; the counter takes it at its next read. */
export interface Tally {
  n: number;
}

/** A counter whose series are counted in plain numbers (tallyOf) and read into it when it is scraped. */
export interface TalliedCounter {
  /**
   * The tally of one label set, made at its first use: one value per label, in `labelNames` order
   * (another count of values throws).
   */
  tallyOf(...values: string[]): Tally;
}

/**
 * A counter for a path that counts every message: prom-client's `inc(labels)` checks and hashes the
 * label set on every call, which showed as 1-2 % of a busy realtime process (2026-11-28, 1,000 LITE
 * sessions). Here a label set is looked up once and counted by `tally.n++`; the counter takes the
 * tallies when it is read (its `collect`), so a scrape shows every count up to that moment. The label
 * sets must be few (ids in them made `*`), as for any counter.
 */
export function talliedCounter<L extends string>(
  config: Omit<CounterConfiguration<L>, "collect"> & { labelNames: readonly L[] },
): TalliedCounter {
  const tallies = new Map<string, { labels: Partial<Record<L, string>>; tally: Tally }>();
  const counter: Counter<L> = new Counter<L>({
    ...config,
    collect() {
      for (const { labels, tally } of tallies.values()) {
        if (tally.n === 0) continue;
        counter.inc(labels, tally.n);
        tally.n = 0;
      }
    },
  });
  return {
    tallyOf(...values) {
      const key = values.join("\u0000");
      let entry = tallies.get(key);
      if (!entry) {
        if (values.length !== config.labelNames.length) {
          throw new Error(
            `${config.name} takes ${config.labelNames.length} label values, got ${values.length}`,
          );
        }
        const labels: Partial<Record<L, string>> = {};
        config.labelNames.forEach((name, i) => {
          labels[name] = values[i];
        });
        entry = { labels, tally: { n: 0 } };
        tallies.set(key, entry);
      }
      return entry.tally;
    },
  };
}
