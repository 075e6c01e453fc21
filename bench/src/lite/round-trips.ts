function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Chunks sent and their acknowledgements (agent.audio_buffer_appended), timed while measuring. */
export class RoundTrips {
  private readonly sentAt = new Map<string, number>();
  private latencies: number[] = [];
  private measuring = false;
  sent = 0;
  acked = 0;
  errors = 0;
  closed = 0;

  /** Forgets what was counted; nothing counts until `resume`. */
  reset(): void {
    this.sentAt.clear();
    this.latencies = [];
    this.sent = 0;
    this.acked = 0;
    this.errors = 0;
    this.closed = 0;
    this.measuring = false;
  }

  /** Counts from now on, adding to what the windows before counted. */
  resume(): void {
    this.measuring = true;
  }

  end(): void {
    this.measuring = false;
  }

  chunkSent(id: string): void {
    if (!this.measuring) return;
    this.sent++;
    this.sentAt.set(id, performance.now());
  }

  acknowledged(id: string): void {
    const at = this.sentAt.get(id);
    if (at === undefined) return;
    this.sentAt.delete(id);
    this.acked++;
    this.latencies.push(performance.now() - at);
  }

  summary() {
    const sorted = [...this.latencies].sort((a, b) => a - b);
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
