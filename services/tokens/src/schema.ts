import type { ColumnType, Selectable } from "kysely";

/** The tokens service's tables (Postgres schema `tokens`). */
export interface TokensDatabase {
  spaces: SpaceTable;
  api_keys: ApiKeyTable;
  signing_keys: SigningKeyTable;
}

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export type TierValue = "free" | "starter" | "pro" | "scale";

export interface SpaceTable {
  id: string;
  name: string;
  tier: TierValue;
  /** Seconds; null means the tier's limit. */
  max_session_duration: number | null;
  created_at: CreatedAt;
}

export interface ApiKeyTable {
  id: string;
  space_id: string;
  name: string;
  prefix: string;
  /** SHA-256 of the key, hex; the key itself is never stored. */
  key_hash: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
}

export interface SigningKeyTable {
  kid: string;
  alg: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  /** The private JWK, sealed with the service's encryption key. */
  private_jwk_sealed: string;
  current: boolean;
  created_at: CreatedAt;
  retired_at: Date | null;
}

export type SpaceRow = Selectable<SpaceTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type SigningKeyRow = Selectable<SigningKeyTable>;
