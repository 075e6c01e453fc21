import { type Clients, sha256Hex } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import { TtlCache } from "./ttl-cache.js";

export interface ApiKeyPrincipal {
  kind: "api_key";
  apiKeyId: string;
  spaceId: string;
}

/** Wraps a lookup of the tokens service: may refuse it (throw), and sees its answer. */
export interface LookupGuard {
  lookup(lookup: () => Promise<ApiKeyPrincipal | null>): Promise<ApiKeyPrincipal | null>;
}

export interface ApiKeyAuthOptions {
  /** How long a valid key is trusted without asking again (a revocation takes at most this long). */
  ttlMs?: number;
  /** How long an unknown key is remembered as unknown (protects the tokens service from floods). */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** How many revoked key ids a gateway remembers (keys are never un-revoked; the oldest go first). */
const REMEMBERED_REVOCATIONS = 100_000;

/**
 * Resolves API keys through the tokens service, caching answers briefly. Keys are cached under their
 * hash, concurrent lookups of one key share one call, and a failing tokens service is never cached. A
 * revocation announced on the bus (`revoke`) drops the key from the cache at once; the time-to-live
 * bounds how long a gateway that missed the announcement keeps trusting it.
 */
export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<ApiKeyPrincipal | null>;
  private readonly inFlight = new Map<string, Promise<ApiKeyPrincipal | null>>();
  private readonly revoked = new Set<string>();
  /** Whether a key id is still active, for session tokens it minted (see isRevoked). */
  private readonly active: TtlCache<boolean>;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;

  constructor(
    private readonly tokens: Pick<Clients["tokens"], "authenticateApiKey" | "getApiKey">,
    options: ApiKeyAuthOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.cache = new TtlCache(options.maxEntries ?? 10_000, options.now);
    this.active = new TtlCache(options.maxEntries ?? 10_000, options.now);
  }

  /** The key was revoked (heard on the bus): it stops authenticating here now. */
  revoke(apiKeyId: string): void {
    if (this.revoked.size >= REMEMBERED_REVOCATIONS) {
      const oldest = this.revoked.values().next().value;
      if (oldest !== undefined) this.revoked.delete(oldest);
    }
    this.revoked.add(apiKeyId);
    this.cache.deleteWhere((p) => p?.apiKeyId === apiKeyId);
    this.active.delete(apiKeyId);
  }

  /**
   * True when the key with this id is revoked (or unknown): session tokens it minted may not start
   * sessions. Answers from what the bus announced, else asks the tokens service (an active answer is
   * trusted for the cache's time-to-live, or until a revocation is heard).
   */
  async isRevoked(apiKeyId: string): Promise<boolean> {
    if (this.revoked.has(apiKeyId)) return true;
    if (this.active.get(apiKeyId) === true) return false;
    let revoked: boolean;
    try {
      const { apiKey } = await this.tokens.getApiKey({ apiKeyId });
      revoked = !apiKey || apiKey.revokedAt !== undefined;
    } catch (err) {
      if (!(err instanceof ConnectError && err.code === Code.NotFound)) throw err;
      revoked = true;
    }
    if (revoked) this.revoke(apiKeyId);
    else this.active.set(apiKeyId, true, this.ttlMs);
    return revoked;
  }

  /**
   * The key's principal, or null when the key is unknown or revoked. When the answer is not cached and
   * the tokens service must be asked, the asking goes through `around` (the failed-auth budget), which
   * may refuse by throwing.
   */
  authenticate(apiKey: string, around?: LookupGuard): Promise<ApiKeyPrincipal | null> {
    const id = sha256Hex(apiKey);
    const cached = this.cache.get(id);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.inFlight.get(id);
    if (pending) return pending;
    const lookup = (around ? around.lookup(() => this.lookup(apiKey)) : this.lookup(apiKey))
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
      // A revocation heard while this lookup was under way wins over its answer.
      if (!res.apiKey || !res.space || this.revoked.has(res.apiKey.id)) return null;
      return { kind: "api_key", apiKeyId: res.apiKey.id, spaceId: res.space.id };
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.Unauthenticated)) {
        return null;
      }
      throw err;
    }
  }
}
