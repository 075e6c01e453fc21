/**
 * The pure part of `pnpm bench:ab`: in which order a round runs the floor and the variants, how the
 * command line names the variants, and what the rounds add up to.
 */

export const FLOOR = "floor";

export interface Variant {
  name: string;
  /** A copy of the suite's built `suite/dist` (its `main.js`). */
  dir: string;
  /** Extra environment for this variant's suite process. */
  env: Record<string, string>;
}

/**
 * `a=/tmp/before;b=/tmp/after:SOME_SETTING=1,OTHER=x`: each variant's name, built directory and extra
 * environment. Throws on a malformed or repeated name (the floor's name is taken).
 */
export function parseVariants(text: string): Variant[] {
  const variants = text
    .split(";")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part): Variant => {
      const m = /^([a-z][a-z0-9_-]*)=([^:]+)(?::(.*))?$/i.exec(part);
      if (!m?.[1] || !m[2]) throw new Error(`variant "${part}" is not NAME=DIR[:ENV=VALUE,...]`);
      const env: Record<string, string> = {};
      for (const pair of (m[3] ?? "").split(",").filter(Boolean)) {
        const eq = pair.indexOf("=");
        if (eq < 1) throw new Error(`variant ${m[1]}: "${pair}" is not ENV=VALUE`);
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return { name: m[1], dir: m[2], env };
    });
  const names = variants.map((v) => v.name);
  if (variants.length < 1) throw new Error("no variant given");
  if (names.includes(FLOOR) || new Set(names).size !== names.length) {
    throw new Error(`variant names must differ from each other and from "${FLOOR}": ${names.join(", ")}`);
  }
  return variants;
}

/**
 * What round `round` runs, in order. A run's place can change its reading on a shared machine (in one
 * check of the separate processes, the later of two runs read faster in 5 pairs of 6, whichever build
 * it was), so the order turns around every other round: floor A B, then B A floor, then floor A B...
 * Over an even number of rounds each takes each place equally often.
 */
export function roundOrder(variants: readonly string[], round: number): string[] {
  const order = [FLOOR, ...variants];
  return round % 2 === 0 ? order : order.reverse();
}

export interface Reading {
  round: number;
  name: string;
  opsPerSecond: number;
  p99: number;
  /** CPU milliseconds per operation of the measured side (the suite process or the floor, and Postgres). */
  cpuMsPerOp: number;
  /** Write system calls per operation of the same processes. */
  writesPerOp: number;
}

export interface Summary {
  name: string;
  rounds: number;
  medianOps: number;
  /** Median over the rounds of ops/s divided by the floor's ops/s in the same round. */
  medianRatio: number;
  medianCpuMsPerOp: number;
  medianWritesPerOp: number;
  /** Rounds in which it did more operations a second than the first variant (undefined for that one). */
  roundsAheadOfFirst?: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Per variant (the floor first): medians over the rounds, ratios to each round's floor. */
export function summarize(readings: readonly Reading[], variants: readonly string[]): Summary[] {
  const of = (name: string) => readings.filter((r) => r.name === name);
  const floorIn = new Map(of(FLOOR).map((r) => [r.round, r.opsPerSecond]));
  const first = new Map(of(variants[0] ?? "").map((r) => [r.round, r.opsPerSecond]));
  return [FLOOR, ...variants].map((name, i) => {
    const mine = of(name);
    const ratios = mine.flatMap((r) => {
      const floor = floorIn.get(r.round);
      return floor ? [r.opsPerSecond / floor] : [];
    });
    const summary: Summary = {
      name,
      rounds: mine.length,
      medianOps: median(mine.map((r) => r.opsPerSecond)),
      medianRatio: median(ratios),
      medianCpuMsPerOp: median(mine.map((r) => r.cpuMsPerOp)),
      medianWritesPerOp: median(mine.map((r) => r.writesPerOp)),
    };
    if (i > 1) {
      summary.roundsAheadOfFirst = mine.filter(
        (r) => r.opsPerSecond > (first.get(r.round) ?? Infinity),
      ).length;
    }
    return summary;
  });
}
