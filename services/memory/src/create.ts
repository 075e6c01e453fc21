import { randomUUID } from "node:crypto";
import { MemoryCreatedSchema } from "@avatar/contracts/memory";
import type { Session } from "@avatar/contracts/sessions";
import { enqueueEvent, invalidRequest, topics } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { Transaction } from "kysely";
import type { MemoryContext } from "./context.js";
import { appendEpisode } from "./episodes.js";
import { memoryToProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { MemoryDatabase, MemoryRow } from "./schema.js";
import { checkSessionUsable, getSpaceSession, readTranscript } from "./session-source.js";
import { toLines } from "./transcript-lines.js";

/** A session that passed the checks, with the summary of its first episode. */
export interface Seed {
  session: Session;
  summary: string;
}

/**
 * Checks a session of the space that is to seed a new memory and summarises it: it must be ended, FULL,
 * and have at least one transcript entry (400 naming `field` otherwise).
 */
export async function seedFromSession(ctx: MemoryContext, session: Session, field: string): Promise<Seed> {
  checkSessionUsable(session, field);
  const lines = toLines(await readTranscript(ctx.sessions, session.spaceId, session.id));
  if (lines.length === 0) {
    throw invalidRequest(`Session ${session.id} has no transcript entries; there is nothing to remember`, {
      field,
    });
  }
  const summary = await ctx.summarizer.summarize(session.spaceId, lines);
  return { session, summary: summary.text };
}

/** Stores a new session memory whose first episode is the seed's, and its memory.created event; returns its id. */
export async function insertSeededMemory(
  trx: Transaction<MemoryDatabase>,
  seed: Seed,
  contentMaxChars: number,
): Promise<string> {
  const id = randomUUID();
  await repo.insertMemory(trx, {
    id,
    space_id: seed.session.spaceId,
    memory_type: "session",
    source_session_id: seed.session.id,
  });
  await appendEpisode(trx, id, { sessionId: seed.session.id, summary: seed.summary }, contentMaxChars);
  const row = await repo.findMemoryById(trx, id);
  if (row) {
    const event = create(MemoryCreatedSchema, { memory: memoryToProto(row, []), sessionId: seed.session.id });
    await enqueueEvent(trx, topics.memoryCreated, event, `memory.created.${id}`, row.created_at);
  }
  return id;
}

/** CreateMemory: a new memory from one of the space's sessions (each call makes a new memory). */
export async function createMemoryFromSession(
  ctx: MemoryContext,
  spaceId: string,
  sessionId: string,
  field: string,
): Promise<MemoryRow> {
  const session = await getSpaceSession(ctx.sessions, spaceId, sessionId, field);
  const seed = await seedFromSession(ctx, session, field);
  const created = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertSeededMemory(trx, seed, ctx.contentMaxChars);
    const row = await repo.findMemoryById(trx, id);
    if (!row) throw new Error(`memory ${id} vanished inside its own transaction`);
    return row;
  });
  void ctx.outbox?.kick();
  return created;
}
