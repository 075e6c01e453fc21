import {
  type Clients,
  InvalidSessionTokenError,
  type SessionTokenClaims,
  VerifiedTokens,
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
 * A token verified once is known until it expires (a start, its keep-alives and its stop present the
 * same one; jose takes ~0.2 ms a verification), and forgotten when the keys are fetched again.
 */
export class SessionTokenVerifier {
  private keys: JSONWebKeySet | undefined;
  private readonly verified = new VerifiedTokens<SessionTokenClaims>();
  private lastFetch = Number.NEGATIVE_INFINITY;
  private fetching: Promise<JSONWebKeySet> | undefined;

  constructor(
    private readonly tokens: Pick<Clients["tokens"], "getSigningKeys">,
    private readonly options: { refreshIntervalMs?: number; now?: () => number } = {},
  ) {}

  /** The principal, or null when the token is not valid (bad signature, expired, foreign key). */
  async verify(token: string): Promise<SessionPrincipal | null> {
    const known = this.verified.get(token, this.seconds());
    if (known) return this.principal(token, known);
    try {
      return this.accepted(token, await verifySessionToken(token, await this.keySet(), new Date(this.now())));
    } catch (err) {
      if (!(err instanceof InvalidSessionTokenError)) throw err;
      if (!err.unknownKey || !this.mayRefresh()) return null;
    }
    try {
      return this.accepted(
        token,
        await verifySessionToken(token, await this.keySet(true), new Date(this.now())),
      );
    } catch (err) {
      if (err instanceof InvalidSessionTokenError) return null;
      throw err;
    }
  }

  /** A token just verified: remembered (unless it has a start of validity, `nbf`, left to jose). */
  private accepted(token: string, claims: SessionTokenClaims): SessionPrincipal {
    if (claims.nbf === undefined) this.verified.set(token, claims, claims.exp, this.seconds());
    return this.principal(token, claims);
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

  /** Unix seconds, as jose judges `exp`: a token is expired from its `exp` second on. */
  private seconds(): number {
    return Math.floor(this.now() / 1000);
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
        this.verified.clear();
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
