import { createHash } from "node:crypto";
import type { Clients } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import { TtlCache } from "./ttl-cache.js";

export interface ApiKeyPrincipal {
  kind: "api_key";
  apiKeyId: string;
  spaceId: string;
}

/** Wraps a lookup of the tokens service: may refuse it (throw), and sees its answer. */
export type LookupGuard = (lookup: () => Promise<ApiKeyPrincipal | null>) => Promise<ApiKeyPrincipal | null>;

export interface ApiKeyAuthOptions {
  /** How long a valid key is trusted without asking again (a revocation takes at most this long). */
  ttlMs?: number;
  /** How long an unknown key is remembered as unknown (protects the tokens service from floods). */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/**
 * Resolves API keys through the tokens service, caching answers briefly. Keys are cached under their
 * hash, concurrent lookups of one key share one call, and a failing tokens service is never cached.
 */
export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<ApiKeyPrincipal | null>;
  private readonly inFlight = new Map<string, Promise<ApiKeyPrincipal | null>>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;

  constructor(
    private readonly tokens: Pick<Clients["tokens"], "authenticateApiKey">,
    options: ApiKeyAuthOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.cache = new TtlCache(options.maxEntries ?? 10_000, options.now);
  }

  /**
   * The key's principal, or null when the key is unknown or revoked. When the answer is not cached and
   * the tokens service must be asked, the asking goes through `around` (the failed-auth budget), which
   * may refuse by throwing.
   */
  authenticate(apiKey: string, around?: LookupGuard): Promise<ApiKeyPrincipal | null> {
    const id = createHash("sha256").update(apiKey).digest("hex");
    const cached = this.cache.get(id);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.inFlight.get(id);
    if (pending) return pending;
    const lookup = (around ? around(() => this.lookup(apiKey)) : this.lookup(apiKey))
      .then((principal) => {
        this.cache.set(id, principal, principal ? this.ttlMs : this.negativeTtlMs);
        return principal;
      })
      .finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, lookup);
    return lookup;
  }

  private async lookup(apiKey: string): Promise<ApiKeyPrincipal | null> {
    try {
      const res = await this.tokens.authenticateApiKey({ apiKey });
      if (!res.apiKey || !res.space) return null;
      return { kind: "api_key", apiKeyId: res.apiKey.id, spaceId: res.space.id };
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.Unauthenticated)) {
        return null;
      }
      throw err;
    }
  }
}
