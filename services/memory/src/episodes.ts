import type { Session } from "@avatar/contracts/sessions";
import { isUuid, notFound } from "@avatar/runtime";
import type { Transaction } from "kysely";
import type { MemoryContext } from "./context.js";
import * as repo from "./repository.js";
import { rollUp } from "./rollup.js";
import type { MemoryDatabase, MemoryRow } from "./schema.js";
import { checkSessionUsable, getSpaceSession, readTranscript } from "./session-source.js";
import { toLines } from "./transcript-lines.js";

/**
 * Inside a transaction that holds the memory's row lock: adds the session's episode with the next
 * sequence number and re-rolls the memory's content from all its episodes. False when the memory
 * already had that session's episode.
 */
export async function appendEpisode(
  trx: Transaction<MemoryDatabase>,
  memoryId: string,
  episode: { sessionId: string; summary: string },
  contentMaxChars: number,
): Promise<boolean> {
  const added = await repo.insertNextEpisode(trx, {
    memory_id: memoryId,
    session_id: episode.sessionId,
    summary: episode.summary,
  });
  if (added) {
    const episodes = await repo.listEpisodes(trx, memoryId);
    await repo.setMemoryContent(trx, memoryId, rollUp(episodes, contentMaxChars));
  }
  return added;
}

export type EpisodeOutcome =
  | { kind: "added" | "present"; memory: MemoryRow }
  | { kind: "no_transcript"; memory: MemoryRow; session: Session };

/**
 * Adds a session's episode to a memory (the session-ended event, or AddSessionEpisode). Idempotent per
 * (memory, session): a repeated call finds the episode and changes nothing. The session must belong to
 * the memory's space (404 otherwise) and be an ended FULL session (400 otherwise); a session without
 * transcript entries adds no episode. The summary is written before the memory is locked, so a slow
 * language model never holds a lock.
 */
export async function addSessionEpisode(
  ctx: MemoryContext,
  memoryId: string,
  sessionId: string,
): Promise<EpisodeOutcome> {
  const memory = isUuid(memoryId) ? await repo.findMemoryById(ctx.db, memoryId) : undefined;
  if (!memory) throw notFound("Memory not found", { field: "memory_id" });
  if (!isUuid(sessionId)) throw notFound("Session not found", { field: "session_id" });
  if (await repo.findEpisode(ctx.db, memory.id, sessionId)) return { kind: "present", memory };

  const session = await getSpaceSession(ctx.sessions, memory.space_id, sessionId, "session_id");
  checkSessionUsable(session, "session_id");
  const lines = toLines(await readTranscript(ctx.sessions, memory.space_id, session.id));
  if (lines.length === 0) return { kind: "no_transcript", memory, session };
  const summary = await ctx.summarizer.summarize(memory.space_id, lines);

  return ctx.db.transaction().execute(async (trx) => {
    const locked = await repo.findMemoryById(trx, memory.id, { forUpdate: true });
    if (!locked) throw notFound("Memory not found", { field: "memory_id" });
    const added = await appendEpisode(
      trx,
      locked.id,
      { sessionId: session.id, summary: summary.text },
      ctx.contentMaxChars,
    );
    const current = (await repo.findMemoryById(trx, locked.id)) ?? locked;
    return { kind: added ? "added" : "present", memory: current };
  });
}
