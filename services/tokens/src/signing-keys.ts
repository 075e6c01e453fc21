import { createPrivateKey, type KeyObject, randomUUID } from "node:crypto";
import {
  SESSION_TOKEN_ALG,
  SESSION_TOKEN_AUDIENCE,
  SESSION_TOKEN_ISSUER,
  type Sealer,
} from "@avatar/runtime";
import type { Kysely } from "kysely";
import type { UnsignedClaims } from "./claims.js";
import { compactJws, jwsHeader } from "./jws.js";
import { Es256Presigner, type PresignerOptions } from "./presign/presigner.js";
import * as repo from "./repository.js";
import type { SigningKeyRow, TokensDatabase } from "./schema.js";
import { signatureAlgorithm } from "./signature-algorithms.js";

/** Retired keys keep verifying this long: longer than any token lives (10 min to start + 2 h + margin). */
export const RETIRED_KEY_GRACE_MS = 24 * 60 * 60 * 1000;

const sealContext = (kid: string) => `signing_key:${kid}`;

/**
 * A new signing key, its private half sealed. New keys are SESSION_TOKEN_ALG's; a key of another
 * algorithm the verifiers accept (an EdDSA key made before ES256) keeps signing until it is rotated.
 */
export function newSigningKey(sealer: Sealer, alg: string = SESSION_TOKEN_ALG) {
  const kid = randomUUID();
  const { publicKey, privateKey } = signatureAlgorithm(alg).generate();
  return {
    kid,
    alg,
    public_jwk: JSON.stringify(publicKey.export({ format: "jwk" })),
    private_jwk_sealed: sealer.seal(JSON.stringify(privateKey.export({ format: "jwk" })), sealContext(kid)),
  };
}

/**
 * Another replica's rotation is noticed within this long. Until then this replica signs with the key it
 * had, which stays valid: a retired key keeps verifying for RETIRED_KEY_GRACE_MS.
 */
export const CURRENT_KEY_REFRESH_MS = 5_000;

export interface SignerOptions {
  refreshMs?: number;
  /**
   * Milliseconds since the epoch: the one clock of the tokens service (tests move it). It stamps `iat`,
   * retirements and the key cache, and verification reads the same one (verify.ts), so a token minted
   * at a time is judged at that time.
   */
  now?: () => number;
  /**
   * ES256 keys sign from presignatures made ahead on a thread of their own (presign/presigner.ts);
   * absent, or a pool of 0, signs with crypto.sign alone.
   */
  presign?: PresignerOptions;
}

/** Signs session tokens with the current key; creates the first key when there is none. */
export class SessionTokenSigner {
  private cached:
    | { row: SigningKeyRow; signature: (input: Buffer) => Buffer; header: string; checkedAt: number }
    | undefined;
  private readonly refreshMs: number;
  private presigner: Es256Presigner | undefined;
  readonly now: () => number;

  constructor(
    private readonly db: Kysely<TokensDatabase>,
    private readonly sealer: Sealer,
    private readonly options: SignerOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? CURRENT_KEY_REFRESH_MS;
    this.now = options.now ?? Date.now;
  }

  /** The current key's presigner's signatures so far and presignatures ready; undefined when it has none. */
  get presigning(): { presigned: number; direct: number; ready: number } | undefined {
    const p = this.presigner;
    return p && { ...p.counts, ready: p.ready };
  }

  /** Stops the presigning thread, if one runs. */
  async close(): Promise<void> {
    await this.presigner?.close();
    this.presigner = undefined;
  }

  async ensureKey(): Promise<SigningKeyRow> {
    return (
      (await repo.currentSigningKey(this.db)) ??
      repo.installSigningKey(this.db, newSigningKey(this.sealer), true, new Date(this.now()))
    );
  }

  async rotate(): Promise<SigningKeyRow> {
    this.cached = undefined;
    return repo.installSigningKey(this.db, newSigningKey(this.sealer), false, new Date(this.now()));
  }

  /** The keys a token may be signed with: current ones and those retired within the grace period. */
  verifyingKeys(): Promise<SigningKeyRow[]> {
    return repo.verifyingKeys(this.db, new Date(this.now() - RETIRED_KEY_GRACE_MS));
  }

  /**
   * What makes a compact JWS (RFC 7515) of the claims with the current key, found first: finding it is
   * the step that can wait or fail (a database read every `refreshMs`), so a caller can take it before it
   * creates anything and then sign at once, at the moment it chooses. The signature is node:crypto's on
   * this thread (or a presignature's): a mint is a hot path, and WebCrypto's asynchronous signing hands
   * every signature to the thread pool and back.
   */
  async signing(): Promise<(claims: UnsignedClaims) => string> {
    const { signature, header } = await this.currentKey();
    return (claims) =>
      compactJws(
        header,
        {
          ...claims,
          iss: SESSION_TOKEN_ISSUER,
          aud: SESSION_TOKEN_AUDIENCE,
          iat: Math.floor(this.now() / 1000),
        },
        signature,
      );
  }

  /** The current key, read again from the database at most every `refreshMs` (a mint is a hot path). */
  private async currentKey() {
    const now = this.now();
    if (this.cached && now - this.cached.checkedAt < this.refreshMs) return this.cached;
    const row = await this.ensureKey();
    if (this.cached?.row.kid === row.kid) {
      this.cached.checkedAt = now;
    } else {
      const jwk = JSON.parse(this.sealer.open(row.private_jwk_sealed, sealContext(row.kid)));
      const header = jwsHeader(row.alg, row.kid);
      const key = createPrivateKey({ key: jwk, format: "jwk" });
      this.cached = { row, signature: this.signatureFor(row.alg, key), header, checkedAt: now };
    }
    return this.cached;
  }

  /** How the current key signs: from presignatures when it is ES256 and a pool is set. */
  private signatureFor(alg: string, key: KeyObject): (input: Buffer) => Buffer {
    void this.presigner?.close();
    this.presigner = undefined;
    const presign = this.options.presign;
    if (alg === "ES256" && presign && presign.poolSize > 0) {
      const presigner = new Es256Presigner(key, presign);
      this.presigner = presigner;
      return (input) => presigner.sign(input);
    }
    const { sign } = signatureAlgorithm(alg);
    return (input) => sign(input, key);
  }
}
