import { type Kysely, sql, type Transaction } from "kysely";
import type { AvatarRow, AvatarStatusValue, AvatarTable, CatalogDatabase, VoiceTable } from "./schema.js";

/** Plain data access for the catalog; every function takes the db (or a transaction). */

type Db = Kysely<CatalogDatabase> | Transaction<CatalogDatabase>;

export async function replaceLanguages(
  db: Db,
  languages: { language: string; code: string }[],
): Promise<void> {
  await db.deleteFrom("languages").execute();
  if (languages.length === 0) return;
  await db
    .insertInto("languages")
    .values(languages.map((l, position) => ({ ...l, position })))
    .execute();
}

export function listLanguages(db: Db) {
  return db.selectFrom("languages").select(["language", "code"]).orderBy("position").execute();
}

export async function replaceLlmModels(db: Db, models: Record<string, string[]>): Promise<void> {
  await db.deleteFrom("llm_models").execute();
  const rows = Object.entries(models).flatMap(([provider, list]) =>
    list.map((model, position) => ({ provider, model, position })),
  );
  if (rows.length > 0) await db.insertInto("llm_models").values(rows).execute();
}

export function listLlmModels(db: Db) {
  return db
    .selectFrom("llm_models")
    .select(["provider", "model"])
    .orderBy("provider")
    .orderBy("position")
    .execute();
}

export type VoiceInput = Omit<VoiceTable, "created_at" | "updated_at" | "provider_voice_ids"> & {
  provider_voice_ids: Record<string, string>;
};

/** Inserts a voice, or replaces its fields when `overwrite` (import) is set. */
export async function saveVoice(db: Db, voice: VoiceInput, overwrite: boolean): Promise<void> {
  const values = { ...voice, provider_voice_ids: JSON.stringify(voice.provider_voice_ids) };
  const insert = db.insertInto("voices").values(values);
  if (!overwrite) {
    await insert.onConflict((oc) => oc.column("id").doNothing()).execute();
    return;
  }
  const { id: _id, ...changes } = values;
  await insert
    .onConflict((oc) => oc.column("id").doUpdateSet({ ...changes, updated_at: sql`now()` }))
    .execute();
}

export function findVoice(db: Db, id: string) {
  return db.selectFrom("voices").selectAll().where("id", "=", id).executeTakeFirst();
}

export type VoiceScope =
  | { kind: "public" }
  | { kind: "private"; spaceId: string }
  | { kind: "visible"; spaceId: string };

export async function listVoices(db: Db, scope: VoiceScope, offset: number, limit: number) {
  let query = db.selectFrom("voices");
  if (scope.kind === "public") query = query.where("is_public", "=", true);
  else if (scope.kind === "private") query = query.where("space_id", "=", scope.spaceId);
  else query = query.where((eb) => eb.or([eb("is_public", "=", true), eb("space_id", "=", scope.spaceId)]));
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy("name").orderBy("id").offset(offset).limit(limit).execute(),
    query.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export type AvatarInput = Omit<AvatarTable, "created_at" | "updated_at" | "seq">;

export async function saveAvatar(db: Db, avatar: AvatarInput, overwrite: boolean): Promise<void> {
  const insert = db.insertInto("avatars").values(avatar);
  if (!overwrite) {
    await insert.onConflict((oc) => oc.column("id").doNothing()).execute();
    return;
  }
  const { id: _id, ...changes } = avatar;
  await insert
    .onConflict((oc) => oc.column("id").doUpdateSet({ ...changes, updated_at: sql`now()` }))
    .execute();
}

/** Avatars with the name of their default voice. */
function avatarsWithVoice(db: Db) {
  return db
    .selectFrom("avatars")
    .leftJoin("voices", "voices.id", "avatars.default_voice_id")
    .selectAll("avatars")
    .select("voices.name as default_voice_name");
}

export type AvatarWithVoice = AvatarRow & { default_voice_name: string | null };

export function findAvatar(db: Db, id: string): Promise<AvatarWithVoice | undefined> {
  return avatarsWithVoice(db).where("avatars.id", "=", id).executeTakeFirst();
}

export type AvatarScope = { kind: "public" } | { kind: "space"; spaceId: string };

/** Listed avatars leave out deleted ones; newest first. */
export async function listAvatars(db: Db, scope: AvatarScope, offset: number, limit: number) {
  let base = db.selectFrom("avatars").where("avatars.status", "<>", "DELETED" satisfies AvatarStatusValue);
  base =
    scope.kind === "public" ? base.where("is_public", "=", true) : base.where("space_id", "=", scope.spaceId);
  const ids = base.select("avatars.id");
  const [rows, total] = await Promise.all([
    avatarsWithVoice(db)
      .where("avatars.id", "in", ids)
      .orderBy("avatars.seq", "desc")
      .offset(offset)
      .limit(limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export interface AvatarChanges {
  name?: string;
  default_voice_id?: string;
  /** true deactivates an ACTIVE or INIT avatar; false reactivates a DEACTIVATED one. */
  deactivate?: boolean;
}

/**
 * Changes an avatar of the space that is not deleted; false when there is none. The status moves
 * in the statement itself, so a concurrent delete is never undone.
 */
export async function updateAvatar(
  db: Db,
  spaceId: string,
  id: string,
  changes: AvatarChanges,
): Promise<boolean> {
  const { deactivate, ...fields } = changes;
  const status =
    deactivate === undefined
      ? {}
      : deactivate
        ? {
            status: sql<AvatarStatusValue>`case when status in ('ACTIVE', 'INIT') then 'DEACTIVATED' else status end`,
          }
        : { status: sql<AvatarStatusValue>`case when status = 'DEACTIVATED' then 'ACTIVE' else status end` };
  const result = await db
    .updateTable("avatars")
    .set({ ...fields, ...status, updated_at: sql`now()` })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .where("status", "<>", "DELETED" satisfies AvatarStatusValue)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Marks an avatar of the space DELETED; false when the space has no such avatar or it is deleted already. */
export async function markAvatarDeleted(db: Db, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .updateTable("avatars")
    .set({ status: "DELETED", updated_at: sql`now()` })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .where("status", "<>", "DELETED" satisfies AvatarStatusValue)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
