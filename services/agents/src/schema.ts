import type { VideoCodecName, VideoQualityName } from "@avatar/media/video-settings";
import type { ColumnType, Generated, Kysely, Selectable, Transaction } from "kysely";

/** The agents service's tables (Postgres schema `agents`). */
export interface AgentsDatabase {
  contexts: ContextTable;
  voice_agents: VoiceAgentTable;
  secrets: SecretTable;
  llm_configurations: LlmConfigurationTable;
  embeds: EmbedTable;
}

export type Db = Kysely<AgentsDatabase> | Transaction<AgentsDatabase>;

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;
/** Orders listings stably (newest first). */
type Seq = Generated<string>;

export interface ContextLinkValue {
  url: string;
  faq: string;
}

export interface ContextTable {
  id: string;
  seq: Seq;
  space_id: string;
  name: string;
  prompt: string;
  opening_text: string;
  links: Json<ContextLinkValue[]>;
  is_public: boolean;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type AgentTypeValue = "managed_agent" | "vendorA_agent" | "vendorD_agent" | "vendorB_agent";

export interface VoiceAgentTable {
  id: string;
  seq: Seq;
  space_id: string;
  name: string;
  agent_type: AgentTypeValue;
  /** The AgentConfiguration message in its proto JSON form. */
  configuration: Json<Record<string, unknown>>;
  is_public: boolean;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type SecretTypeValue =
  | "VENDORA_API_KEY"
  | "VENDORB_API_KEY"
  | "VENDORC_API_KEY"
  | "VENDORD_API_KEY"
  | "VENDORE_API_KEY";

export interface SecretTable {
  id: string;
  seq: Seq;
  space_id: string;
  secret_name: string;
  secret_type: SecretTypeValue;
  /** The value sealed with the service's key, the secret id as context; never the plain value. */
  sealed_value: string;
  /** The key that sealed it, so values under a retired key can be found and re-sealed. */
  key_id: string;
  /** Hosts it may be sent to besides its provider's (host names or "*.domain"). */
  allowed_hosts: ColumnType<string[], string[] | undefined, never>;
  created_at: CreatedAt;
}

export interface LlmConfigurationTable {
  id: string;
  seq: Seq;
  space_id: string;
  display_name: string;
  model_name: string;
  secret_id: string;
  base_url: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type OrientationValue = "horizontal" | "vertical";

export interface EmbedTable {
  id: string;
  space_id: string;
  avatar_id: string;
  context_id: string | null;
  voice_id: string | null;
  voice_agent_id: string | null;
  orientation: OrientationValue;
  max_session_duration: number | null;
  default_language: string | null;
  is_sandbox: boolean;
  video_quality: VideoQualityName;
  video_encoding: VideoCodecName;
  created_at: CreatedAt;
  max_concurrent_sessions: number;
  max_sessions_per_hour: number;
  /** Normalised origins, or "*". */
  allowed_origins: string[];
  is_disabled: boolean;
  updated_at: UpdatedAt;
}

export type ContextRow = Selectable<ContextTable>;
export type VoiceAgentRow = Selectable<VoiceAgentTable>;
export type SecretRow = Selectable<SecretTable>;
export type LlmConfigurationRow = Selectable<LlmConfigurationTable>;
export type EmbedRow = Selectable<EmbedTable>;
