import { type Kysely, sql, type Transaction } from "kysely";
import type { MemoryDatabase, MemoryRow, MemoryTypeValue, SessionEpisodeRow } from "./schema.js";

/** Plain data access for memories and their episodes; every function takes the db (or a transaction). */

type Db = Kysely<MemoryDatabase> | Transaction<MemoryDatabase>;

export function findMemory(db: Db, spaceId: string, memoryId: string): Promise<MemoryRow | undefined> {
  return db
    .selectFrom("memories")
    .selectAll()
    .where("id", "=", memoryId)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
}

/** By id alone (the episode path knows the memory, not the space); lock it with `forUpdate`. */
export function findMemoryById(
  db: Db,
  memoryId: string,
  options: { forUpdate?: boolean } = {},
): Promise<MemoryRow | undefined> {
  const query = db.selectFrom("memories").selectAll().where("id", "=", memoryId);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The oldest memory of the space created from `sessionId`, if any. */
export function findMemoryFromSession(
  db: Db,
  spaceId: string,
  sessionId: string,
): Promise<MemoryRow | undefined> {
  return db
    .selectFrom("memories")
    .selectAll()
    .where("space_id", "=", spaceId)
    .where("source_session_id", "=", sessionId)
    .orderBy("seq")
    .limit(1)
    .executeTakeFirst();
}

export type MemoryListRow = Omit<MemoryRow, "memory_content"> & {
  /** The first PREVIEW_HEAD characters of memory_content: enough for the preview, never the whole text. */
  content_head: string;
};

export const PREVIEW_HEAD = 201;

/** Newest first. */
export async function listMemories(
  db: Db,
  spaceId: string,
  memoryType: MemoryTypeValue | undefined,
  offset: number,
  limit: number,
): Promise<{ rows: MemoryListRow[]; count: number }> {
  let base = db.selectFrom("memories").where("space_id", "=", spaceId);
  if (memoryType) base = base.where("memory_type", "=", memoryType);
  const [rows, total] = await Promise.all([
    base
      .select([
        "id",
        "space_id",
        "memory_type",
        "source_session_id",
        "created_at",
        "updated_at",
        "seq",
        sql<string>`left(memory_content, ${PREVIEW_HEAD})`.as("content_head"),
      ])
      .orderBy("seq", "desc")
      .offset(offset)
      .limit(limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export function listEpisodes(db: Db, memoryId: string): Promise<SessionEpisodeRow[]> {
  return db
    .selectFrom("session_episodes")
    .selectAll()
    .where("memory_id", "=", memoryId)
    .orderBy("sequence_num")
    .execute();
}

export function findEpisode(db: Db, memoryId: string, sessionId: string) {
  return db
    .selectFrom("session_episodes")
    .selectAll()
    .where("memory_id", "=", memoryId)
    .where("session_id", "=", sessionId)
    .executeTakeFirst();
}

export async function insertMemory(
  db: Db,
  memory: { id: string; space_id: string; memory_type: MemoryTypeValue; source_session_id: string | null },
): Promise<void> {
  await db.insertInto("memories").values(memory).execute();
}

/**
 * Adds the episode with the next sequence number. The caller holds the memory's row lock, so the number
 * cannot be taken twice; a second episode of one session is refused by the key and reported as false.
 */
export async function insertNextEpisode(
  db: Db,
  episode: { memory_id: string; session_id: string; summary: string },
): Promise<boolean> {
  const last = await db
    .selectFrom("session_episodes")
    .select((eb) => eb.fn.max("sequence_num").as("n"))
    .where("memory_id", "=", episode.memory_id)
    .executeTakeFirst();
  const result = await db
    .insertInto("session_episodes")
    .values({ ...episode, sequence_num: Number(last?.n ?? 0) + 1 })
    .onConflict((oc) => oc.columns(["memory_id", "session_id"]).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function setMemoryContent(db: Db, memoryId: string, content: string): Promise<void> {
  await db
    .updateTable("memories")
    .set({ memory_content: content, updated_at: sql`now()` })
    .where("id", "=", memoryId)
    .execute();
}

/** Episodes go with it (the foreign key cascades). False when there was nothing to delete. */
export async function deleteMemory(db: Db, spaceId: string, memoryId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("memories")
    .where("id", "=", memoryId)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Serialises the creation of memories from one session within the transaction (prev_session_id reuse). */
export async function lockSessionSource(db: Transaction<MemoryDatabase>, sessionId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`avatar.memory.source.${sessionId}`}))`.execute(db);
}
