function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** What `RoundTrips.stalls` found. */
export interface Stalls {
  /** The bound, ms. */
  overMs: number;
  /** Chunks over the bound, and their share of the chunks acknowledged. */
  chunks: number;
  share: number;
  /** How many stalls they came in, and the largest: its chunks and how long it lasted, ms. */
  stalls: number;
  largest: { chunks: number; ms: number };
}

/** Chunks sent and their acknowledgements (agent.audio_buffer_appended), timed while measuring. */
export class RoundTrips {
  private readonly sentAt = new Map<string, number>();
  /** Each acknowledged chunk: when it was sent (on `now`) and its round trip, ms. */
  private trips: { at: number; ms: number }[] = [];
  private measuring = false;
  /** When the first window since `reset` started (on `now`). */
  private startedAt: number | undefined;
  sent = 0;
  acked = 0;
  errors = 0;
  closed = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Forgets what was counted; nothing counts until `resume`. */
  reset(): void {
    this.sentAt.clear();
    this.trips = [];
    this.sent = 0;
    this.acked = 0;
    this.errors = 0;
    this.closed = 0;
    this.measuring = false;
    this.startedAt = undefined;
  }

  /** Counts from now on, adding to what the windows before counted. */
  resume(): void {
    this.measuring = true;
    this.startedAt ??= this.now();
  }

  end(): void {
    this.measuring = false;
  }

  chunkSent(id: string): void {
    if (!this.measuring) return;
    this.sent++;
    this.sentAt.set(id, this.now());
  }

  acknowledged(id: string): void {
    const at = this.sentAt.get(id);
    if (at === undefined) return;
    this.sentAt.delete(id);
    this.acked++;
    this.trips.push({ at, ms: this.now() - at });
  }

  /**
   * The chunks whose round trip took longer than `overMs`, grouped into stalls: chunks on their way at
   * overlapping times (or within `gapMs` of each other) waited for the same thing. Many chunks in few
   * stalls is a process or the host standing still; one chunk per stall is a cost on the path itself.
   */
  stalls(overMs: number, gapMs = 10): Stalls {
    const slow = this.trips.filter((t) => t.ms > overMs).sort((a, b) => a.at - b.at);
    const episodes: { until: number; from: number; chunks: number }[] = [];
    for (const { at: from, ms } of slow) {
      const last = episodes.at(-1);
      if (last && from <= last.until + gapMs) {
        last.until = Math.max(last.until, from + ms);
        last.chunks++;
      } else {
        episodes.push({ from, until: from + ms, chunks: 1 });
      }
    }
    const largest = episodes.reduce((a, b) => (b.chunks > a.chunks ? b : a), {
      from: 0,
      until: 0,
      chunks: 0,
    });
    return {
      overMs,
      chunks: slow.length,
      share: this.trips.length > 0 ? slow.length / this.trips.length : 0,
      stalls: episodes.length,
      largest: { chunks: largest.chunks, ms: largest.until - largest.from },
    };
  }

  /**
   * The p99 round trip of the chunks sent in each second since the first window started (NaN for a
   * second in which none was acknowledged): how a stall came and how long the backend took to recover.
   */
  p99BySecond(): number[] {
    const start = this.startedAt;
    if (start === undefined) return [];
    const seconds: number[][] = [];
    for (const { at, ms } of this.trips) {
      const second = Math.floor((at - start) / 1000);
      for (let i = seconds.length; i <= second; i++) seconds.push([]);
      seconds[second]?.push(ms);
    }
    return seconds.map((list) =>
      percentile(
        list.sort((a, b) => a - b),
        99,
      ),
    );
  }

  summary() {
    const sorted = this.trips.map((t) => t.ms).sort((a, b) => a - b);
    return {
      sent: this.sent,
      acked: this.acked,
      lost: this.sentAt.size,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? Number.NaN,
      errors: this.errors,
      closed: this.closed,
    };
  }
}
