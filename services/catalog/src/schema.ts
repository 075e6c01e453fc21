import type { ColumnType, Generated, Selectable } from "kysely";

/** The catalog service's tables (Postgres schema `catalog`). */
export interface CatalogDatabase {
  languages: LanguageTable;
  llm_models: LlmModelTable;
  voices: VoiceTable;
  avatars: AvatarTable;
  avatar_looks: AvatarLookTable;
}

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface LanguageTable {
  code: string;
  language: string;
  position: number;
}

export interface LlmModelTable {
  provider: string;
  model: string;
  position: number;
}

export interface VoiceTable {
  id: string;
  /** Null for the catalog's own public voices. */
  space_id: string | null;
  name: string;
  language: string;
  gender: string;
  preview_url: string;
  is_public: boolean;
  voice_engines: string[];
  provider_voice_ids: ColumnType<Record<string, string>, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type AvatarStatusValue = "ACTIVE" | "INIT" | "DEACTIVATED" | "DELETED";

export interface AvatarTable {
  id: string;
  /** Null for the catalog's own public avatars. */
  space_id: string | null;
  name: string;
  type: string;
  status: AvatarStatusValue;
  preview_url: string;
  default_voice_id: string | null;
  default_voice_agent_id: string | null;
  is_1080p: boolean;
  is_public: boolean;
  sandbox_enabled: boolean;
  expires_at: Date | null;
  error_message: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Orders listings stably (newest first). */
  seq: Generated<string>;
}

export type AvatarRow = Selectable<AvatarTable>;
export type VoiceRow = Selectable<VoiceTable>;

/** The fields of a LookSeed, snake_case (as in the catalog file). */
export type LookSeedFields = Record<string, string>;

export interface AvatarLookTable {
  avatar_id: string;
  seed: ColumnType<LookSeedFields | null, string | null, string | null>;
  look: Uint8Array | null;
  look_key: string;
  error: string;
  /** LOOK_GENERATOR_VERSION of a generated `look`. */
  generator: ColumnType<string, string | undefined, string>;
  updated_at: Timestamp;
}
