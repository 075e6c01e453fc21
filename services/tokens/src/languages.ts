import type { Clients } from "@avatar/runtime";

/** The supported language codes of the catalog, fetched at most once per `ttlMs`. */
export class LanguageCodes {
  private codes: Set<string> | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly catalog: Pick<Clients["catalog"], "listLanguages">,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async has(code: string): Promise<boolean> {
    if (!this.codes || this.now() - this.fetchedAt > this.ttlMs) {
      const { languages } = await this.catalog.listLanguages({});
      this.codes = new Set(languages.map((l) => l.code));
      this.fetchedAt = this.now();
    }
    return this.codes.has(code);
  }
}
