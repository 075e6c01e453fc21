import type { ContextLinkValue, ContextRow, Db } from "../schema.js";

/** Plain data access for contexts. */

export interface ContextInput {
  id: string;
  space_id: string;
  name: string;
  prompt: string;
  opening_text: string;
  links: ContextLinkValue[];
  is_public: boolean;
}

export async function insertContext(db: Db, input: ContextInput): Promise<ContextRow> {
  return db
    .insertInto("contexts")
    .values({ ...input, links: JSON.stringify(input.links) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findContext(db: Db, id: string): Promise<ContextRow | undefined> {
  return db.selectFrom("contexts").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listContexts(db: Db, spaceId: string, offset: number, limit: number) {
  const base = db.selectFrom("contexts").where("space_id", "=", spaceId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("seq", "desc").offset(offset).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export interface ContextChanges {
  name?: string;
  prompt?: string;
  opening_text?: string;
  links?: ContextLinkValue[];
}

/** Changes a context of the space; undefined when the space has no such context. */
export function updateContext(
  db: Db,
  spaceId: string,
  id: string,
  changes: ContextChanges,
): Promise<ContextRow | undefined> {
  const { links, ...rest } = changes;
  return db
    .updateTable("contexts")
    .set({ ...rest, ...(links ? { links: JSON.stringify(links) } : {}), updated_at: new Date() })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .returningAll()
    .executeTakeFirst();
}

/** True when the space had the context. */
export async function deleteContext(db: Db, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("contexts")
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
