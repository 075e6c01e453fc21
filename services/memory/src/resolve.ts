import type { Session } from "@avatar/contracts/sessions";
import { invalidRequest, isUuid, notFound } from "@avatar/runtime";
import type { MemoryContext } from "./context.js";
import { insertSeededMemory, seedFromSession } from "./create.js";
import * as repo from "./repository.js";
import type { MemoryRow } from "./schema.js";
import { getSpaceSession } from "./session-source.js";

/** The public names of the token body's memory reference, for the field of 400/404 answers. */
export const PREV_SESSION_FIELD = "memory.prev_session_id";
export const SESSION_MEMORY_FIELD = "memory.session_memory_id";

export interface MemoryReference {
  spaceId: string;
  prevSessionId?: string | undefined;
  sessionMemoryId?: string | undefined;
}

export interface Resolved {
  memory: MemoryRow;
  /** True when this call created the memory. */
  created: boolean;
}

const differentMemories = () =>
  invalidRequest("memory.prev_session_id and memory.session_memory_id resolve to different memories", {
    field: "memory",
  });

/**
 * The token endpoint's memory reference (MemoryRef):
 * - session_memory_id must be a session memory of the caller's space (404 otherwise);
 * - prev_session_id (a session of the caller's space, 404 otherwise) reuses the memory created from that
 *   session, else the memory that session ran with; with neither it creates one synchronously from the
 *   session, under the checks of CreateMemory (ended, FULL, transcript: 400 otherwise);
 * - both: they must resolve to the same memory (400 otherwise, and nothing is created).
 */
export async function resolveMemory(ctx: MemoryContext, ref: MemoryReference): Promise<Resolved> {
  const prev = ref.prevSessionId || undefined;
  const attachedId = ref.sessionMemoryId || undefined;
  if (!prev && !attachedId) {
    throw invalidRequest("The memory reference names neither prev_session_id nor session_memory_id", {
      field: "memory",
    });
  }

  let attached: MemoryRow | undefined;
  if (attachedId) {
    attached = isUuid(attachedId) ? await repo.findMemory(ctx.db, ref.spaceId, attachedId) : undefined;
    if (attached?.memory_type !== "session") {
      throw notFound("Memory not found", { field: SESSION_MEMORY_FIELD });
    }
  }
  if (!prev) return { memory: attached as MemoryRow, created: false };

  const session = await getSpaceSession(ctx.sessions, ref.spaceId, prev, PREV_SESSION_FIELD);
  const reused = await memoryOfSession(ctx, session);
  if (reused) {
    if (attached && attached.id !== reused.id) throw differentMemories();
    return { memory: reused, created: false };
  }
  // A memory created now could not be the attached one.
  if (attached) throw differentMemories();
  return createOnce(ctx, session);
}

/** The memory created from the session (the oldest one), else the memory the session ran with. */
async function memoryOfSession(ctx: MemoryContext, session: Session): Promise<MemoryRow | undefined> {
  const fromSession = await repo.findMemoryFromSession(ctx.db, session.spaceId, session.id);
  if (fromSession) return fromSession;
  if (!isUuid(session.memoryId)) return undefined;
  const ranWith = await repo.findMemory(ctx.db, session.spaceId, session.memoryId);
  return ranWith?.memory_type === "session" ? ranWith : undefined;
}

/**
 * Creates the session's memory unless a concurrent resolve of the same session got there first: the
 * summary is written outside the lock, the check and the insert happen under it.
 */
async function createOnce(ctx: MemoryContext, session: Session): Promise<Resolved> {
  const seed = await seedFromSession(ctx, session, PREV_SESSION_FIELD);
  const resolved = await ctx.db.transaction().execute(async (trx): Promise<Resolved> => {
    await repo.lockSessionSource(trx, session.id);
    const existing = await repo.findMemoryFromSession(trx, session.spaceId, session.id);
    if (existing) return { memory: existing, created: false };
    const id = await insertSeededMemory(trx, seed, ctx.contentMaxChars);
    const row = await repo.findMemoryById(trx, id);
    if (!row) throw new Error(`memory ${id} vanished inside its own transaction`);
    return { memory: row, created: true };
  });
  if (resolved.created) void ctx.outbox?.kick();
  return resolved;
}
