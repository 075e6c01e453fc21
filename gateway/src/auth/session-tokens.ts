import {
  type Clients,
  InvalidSessionTokenError,
  type SessionTokenClaims,
  verifySessionToken,
} from "@avatar/runtime";
import type { JSONWebKeySet, JWK } from "jose";

export interface SessionPrincipal {
  kind: "session";
  sessionId: string;
  spaceId: string;
  apiKeyId: string;
  claims: SessionTokenClaims;
  token: string;
}

/**
 * Verifies session tokens locally with the tokens service's public keys. Keys are fetched once and
 * again when a token names a key not yet known (after a rotation), at most once per refresh interval.
 */
export class SessionTokenVerifier {
  private keys: JSONWebKeySet | undefined;
  private lastFetch = Number.NEGATIVE_INFINITY;
  private fetching: Promise<JSONWebKeySet> | undefined;

  constructor(
    private readonly tokens: Pick<Clients["tokens"], "getSigningKeys">,
    private readonly options: { refreshIntervalMs?: number; now?: () => number } = {},
  ) {}

  /** The principal, or null when the token is not valid (bad signature, expired, foreign key). */
  async verify(token: string): Promise<SessionPrincipal | null> {
    try {
      return this.principal(
        token,
        await verifySessionToken(token, await this.keySet(), new Date(this.now())),
      );
    } catch (err) {
      if (!(err instanceof InvalidSessionTokenError)) throw err;
      if (!err.unknownKey || !this.mayRefresh()) return null;
    }
    try {
      return this.principal(
        token,
        await verifySessionToken(token, await this.keySet(true), new Date(this.now())),
      );
    } catch (err) {
      if (err instanceof InvalidSessionTokenError) return null;
      throw err;
    }
  }

  private principal(token: string, claims: SessionTokenClaims): SessionPrincipal {
    return {
      kind: "session",
      sessionId: claims.sub,
      spaceId: claims.space_id,
      apiKeyId: claims.api_key_id,
      claims,
      token,
    };
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private mayRefresh(): boolean {
    return this.now() - this.lastFetch >= (this.options.refreshIntervalMs ?? 5_000);
  }

  private async keySet(refresh = false): Promise<JSONWebKeySet> {
    if (this.keys && !refresh) return this.keys;
    this.fetching ??= this.tokens
      .getSigningKeys({})
      .then((res) => {
        this.lastFetch = this.now();
        this.keys = {
          keys: res.keys.map((k) => ({ ...(JSON.parse(k.publicJwk) as JWK), kid: k.kid, alg: k.alg })),
        };
        return this.keys;
      })
      .finally(() => {
        this.fetching = undefined;
      });
    return this.fetching;
  }
}
