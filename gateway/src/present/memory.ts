import { type Memory, MemoryType, type SessionEpisode } from "@avatar/contracts/memory";
import { isoTime } from "./time.js";

/** MemoryTypeEnum on the wire. */
export const memoryTypeName: Record<MemoryType, string> = {
  [MemoryType.UNSPECIFIED]: "session",
  [MemoryType.SESSION]: "session",
};

/** A list entry: `{id, memory_type, memory_content_preview, created_at, updated_at}`. */
export function presentMemoryListItem(m: Memory) {
  return {
    id: m.id,
    memory_type: memoryTypeName[m.memoryType],
    memory_content_preview: m.memoryContentPreview,
    created_at: isoTime(m.createdAt),
    updated_at: isoTime(m.updatedAt),
  };
}

export function presentSessionEpisode(e: SessionEpisode) {
  return {
    session_id: e.sessionId,
    sequence_num: e.sequenceNum,
    summary: e.summary,
    created_at: isoTime(e.createdAt),
  };
}

/** The detail: the list entry plus `memory_content` and `session_episodes` in sequence order. */
export function presentMemory(m: Memory) {
  return {
    ...presentMemoryListItem(m),
    memory_content: m.memoryContent,
    session_episodes: m.sessionEpisodes.map(presentSessionEpisode),
  };
}
