import type { Clients } from "@avatar/runtime";

/**
 * API keys of the benchmark space, used so that no key goes over the token endpoint's limit (10 per
 * second per key, in fixed one-second windows): each key is taken at most `perWindow` times per
 * wall-clock second. The limit stays as the interface sets it; the load is spread over many keys, as
 * many independent backends of one space would do.
 */
export class KeyPool {
  private window = -1;
  private uses: number[] = [];
  private next = 0;

  private constructor(
    private readonly keys: string[],
    private readonly perWindow: number,
  ) {}

  static async create(
    tokens: Clients["tokens"],
    spaceId: string,
    count: number,
    perWindow = 9,
  ): Promise<KeyPool> {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      keys.push((await tokens.createApiKey({ spaceId, name: `bench-${i}` })).apiKeySecret);
    }
    return new KeyPool(keys, perWindow);
  }

  get size(): number {
    return this.keys.length;
  }

  /** A key with budget left in the current second, waiting for the next second when all are spent. */
  async take(): Promise<string> {
    for (;;) {
      const now = Date.now();
      const window = Math.floor(now / 1000);
      if (window !== this.window) {
        this.window = window;
        this.uses = this.keys.map(() => 0);
      }
      for (let tried = 0; tried < this.keys.length; tried++) {
        const i = (this.next + tried) % this.keys.length;
        if ((this.uses[i] ?? 0) < this.perWindow) {
          this.uses[i] = (this.uses[i] ?? 0) + 1;
          this.next = (i + 1) % this.keys.length;
          return this.keys[i] ?? "";
        }
      }
      await new Promise((r) => setTimeout(r, 1000 - (now % 1000) + 1));
    }
  }
}
