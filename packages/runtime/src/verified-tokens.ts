/**
 * Tokens already verified, each until it expires: a bearer presents the same token again and again (a
 * service on every call, a session at its start, keep-alives and stop), and a signature check costs
 * far more than a map lookup. Only the exact token text hits, so a forged one is never taken for a
 * known one. Bounded: when full, the expired entries go, and all of them if none had expired.
 */
export class VerifiedTokens<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  /** What `key` was verified as, while `nowS` (Unix seconds) is before its end. */
  get(key: string, nowS: number): V | undefined {
    const entry = this.entries.get(key);
    return entry && nowS < entry.until ? entry.value : undefined;
  }

  /** Remembers `value` for `key` until `untilS` (Unix seconds, the first second it no longer holds). */
  set(key: string, value: V, untilS: number, nowS: number): void {
    if (this.entries.size >= this.maxEntries) {
      for (const [k, e] of this.entries) if (e.until <= nowS) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(key, { value, until: untilS });
  }

  /** Forgets every token (the keys they were verified with changed). */
  clear(): void {
    this.entries.clear();
  }
}
