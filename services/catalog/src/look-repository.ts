import type { Kysely, Transaction } from "kysely";
import { sql } from "kysely";
import type { CatalogDatabase, LookSeedFields } from "./schema.js";

/** Data access for avatars' looks; every function takes the db (or a transaction). */

type Db = Kysely<CatalogDatabase> | Transaction<CatalogDatabase>;

export type LookInput =
  | { kind: "upload"; look: Uint8Array; lookKey: string }
  | { kind: "seed"; seed: LookSeedFields }
  | { kind: "invalid"; error: string };

export async function saveLook(db: Db, avatarId: string, input: LookInput): Promise<void> {
  const values = {
    avatar_id: avatarId,
    seed: input.kind === "seed" ? JSON.stringify(input.seed) : null,
    look: input.kind === "upload" ? input.look : null,
    look_key: input.kind === "upload" ? input.lookKey : "",
    error: input.kind === "invalid" ? input.error : "",
  };
  const { avatar_id: _id, ...changes } = values;
  await db
    .insertInto("avatar_looks")
    .values(values)
    .onConflict((oc) => oc.column("avatar_id").doUpdateSet({ ...changes, updated_at: sql`now()` }))
    .execute();
}

export function findLook(db: Db, avatarId: string) {
  return db.selectFrom("avatar_looks").selectAll().where("avatar_id", "=", avatarId).executeTakeFirst();
}

/** The look's row without the look itself (megabytes that take tens of ms to read): its key and state. */
export function findLookHeader(db: Db, avatarId: string) {
  return db
    .selectFrom("avatar_looks")
    .select(["seed", "look_key", "generator", "error", sql<boolean>`look is not null`.as("has_look")])
    .where("avatar_id", "=", avatarId)
    .executeTakeFirst();
}

/**
 * Keeps a look generated from its seed by `generator` (replacing one another generator drew), unless the
 * row changed meanwhile (a new import wins).
 */
export async function cacheGeneratedLook(
  db: Db,
  avatarId: string,
  seedJson: string,
  generated: { look: Uint8Array; lookKey: string; generator: string },
): Promise<void> {
  const { look, lookKey, generator } = generated;
  await db
    .insertInto("avatar_looks")
    .values({ avatar_id: avatarId, seed: seedJson, look, look_key: lookKey, error: "", generator })
    .onConflict((oc) =>
      oc
        .column("avatar_id")
        .doUpdateSet({ look, look_key: lookKey, generator })
        .where((eb) =>
          eb.or([eb("avatar_looks.look", "is", null), eb("avatar_looks.generator", "<>", generator)]),
        )
        .where(sql`avatar_looks.seed::text`, "=", sql`${seedJson}::jsonb::text`),
    )
    .execute();
}
