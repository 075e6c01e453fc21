import {
  type Memory,
  MemorySchema,
  MemoryType,
  type SessionEpisode,
  SessionEpisodeSchema,
} from "@avatar/contracts/memory";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { MemoryListRow } from "./repository.js";
import type { MemoryRow, MemoryTypeValue, SessionEpisodeRow } from "./schema.js";

export const PREVIEW_CHARS = 200;

export const memoryTypeToProto: Record<MemoryTypeValue, MemoryType> = { session: MemoryType.SESSION };

/** UNSPECIFIED means every type (list) or the only one there is (create). */
export function memoryTypeFromProto(type: MemoryType): MemoryTypeValue | undefined {
  return type === MemoryType.SESSION ? "session" : undefined;
}

/** The first PREVIEW_CHARS characters (whole code points) of the content, with an ellipsis when cut. */
export function contentPreview(content: string): string {
  const chars = Array.from(content);
  if (chars.length <= PREVIEW_CHARS) return content;
  return `${chars.slice(0, PREVIEW_CHARS).join("").trimEnd()}…`;
}

export function episodeToProto(row: SessionEpisodeRow): SessionEpisode {
  return create(SessionEpisodeSchema, {
    sessionId: row.session_id,
    sequenceNum: row.sequence_num,
    summary: row.summary,
    createdAt: toTimestamp(row.created_at),
  });
}

/** The detail: content and episodes in sequence order. */
export function memoryToProto(row: MemoryRow, episodes: SessionEpisodeRow[]): Memory {
  return create(MemorySchema, {
    id: row.id,
    spaceId: row.space_id,
    memoryType: memoryTypeToProto[row.memory_type],
    memoryContent: row.memory_content,
    memoryContentPreview: contentPreview(row.memory_content),
    sessionEpisodes: episodes.map(episodeToProto),
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}

/** A list entry: the preview only, no content and no episodes. */
export function memoryListItemToProto(row: MemoryListRow): Memory {
  return create(MemorySchema, {
    id: row.id,
    spaceId: row.space_id,
    memoryType: memoryTypeToProto[row.memory_type],
    memoryContentPreview: contentPreview(row.content_head),
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
  });
}
