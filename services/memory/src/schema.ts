import type { OutboxTable } from "@avatar/runtime";
import type { ColumnType, Generated, Selectable } from "kysely";

/** The memory service's tables (Postgres schema `memory`). */
export interface MemoryDatabase {
  memories: MemoryTable;
  session_episodes: SessionEpisodeTable;
  outbox: OutboxTable;
}

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** MemoryTypeEnum; `session` is the only type so far. */
export type MemoryTypeValue = "session";

export interface MemoryTable {
  id: string;
  space_id: string;
  memory_type: MemoryTypeValue;
  /** The rolled-up content: every episode's summary, in sequence order. */
  memory_content: ColumnType<string, string | undefined, string>;
  /** The session the memory was created from (POST /v1/memory, or a prev_session_id); null otherwise. */
  source_session_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Orders listings stably (newest first). */
  seq: Generated<string>;
}

export interface SessionEpisodeTable {
  memory_id: string;
  session_id: string;
  /** 1, 2, ... in the order the episodes were added; unique per memory. */
  sequence_num: number;
  summary: string;
  created_at: Timestamp;
}

export type MemoryRow = Selectable<MemoryTable>;
export type SessionEpisodeRow = Selectable<SessionEpisodeTable>;
