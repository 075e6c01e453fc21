import { generateKeyPairSync, randomUUID } from "node:crypto";
import {
  SESSION_TOKEN_ALG,
  SESSION_TOKEN_AUDIENCE,
  SESSION_TOKEN_ISSUER,
  type Sealer,
  type SessionTokenClaims,
} from "@avatar/runtime";
import { importJWK, type JWK, SignJWT } from "jose";
import type { Kysely } from "kysely";
import * as repo from "./repository.js";
import type { SigningKeyRow, TokensDatabase } from "./schema.js";

/** Retired keys keep verifying this long: longer than any token lives (10 min to start + 2 h + margin). */
export const RETIRED_KEY_GRACE_MS = 24 * 60 * 60 * 1000;

const sealContext = (kid: string) => `signing_key:${kid}`;

function newKeyPair(sealer: Sealer) {
  const kid = randomUUID();
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    kid,
    alg: SESSION_TOKEN_ALG,
    public_jwk: JSON.stringify(publicKey.export({ format: "jwk" })),
    private_jwk_sealed: sealer.seal(JSON.stringify(privateKey.export({ format: "jwk" })), sealContext(kid)),
  };
}

/** Signs session tokens with the current key; creates the first key when there is none. */
export class SessionTokenSigner {
  private cached: { row: SigningKeyRow; key: Awaited<ReturnType<typeof importJWK>> } | undefined;

  constructor(
    private readonly db: Kysely<TokensDatabase>,
    private readonly sealer: Sealer,
  ) {}

  async ensureKey(): Promise<SigningKeyRow> {
    return (
      (await repo.currentSigningKey(this.db)) ??
      repo.installSigningKey(this.db, newKeyPair(this.sealer), true)
    );
  }

  async rotate(): Promise<SigningKeyRow> {
    this.cached = undefined;
    return repo.installSigningKey(this.db, newKeyPair(this.sealer), false);
  }

  async sign(claims: Omit<SessionTokenClaims, "iss" | "aud" | "iat">): Promise<string> {
    const { row, key } = await this.currentKey();
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: row.alg, kid: row.kid, typ: "JWT" })
      .setIssuer(SESSION_TOKEN_ISSUER)
      .setAudience(SESSION_TOKEN_AUDIENCE)
      .setIssuedAt()
      .sign(key);
  }

  private async currentKey() {
    const row = await this.ensureKey();
    if (this.cached?.row.kid !== row.kid) {
      const jwk = JSON.parse(this.sealer.open(row.private_jwk_sealed, sealContext(row.kid))) as JWK;
      this.cached = { row, key: await importJWK(jwk, row.alg) };
    }
    return this.cached;
  }
}
