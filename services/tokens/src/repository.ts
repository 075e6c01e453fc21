import { type Kysely, sql, type Transaction } from "kysely";
import type { ApiKeyRow, SigningKeyRow, SpaceRow, TierValue, TokensDatabase } from "./schema.js";

type Db = Kysely<TokensDatabase> | Transaction<TokensDatabase>;

export async function insertSpace(
  db: Db,
  space: { id: string; name: string; tier: TierValue; max_session_duration: number | null },
): Promise<SpaceRow> {
  return db.insertInto("spaces").values(space).returningAll().executeTakeFirstOrThrow();
}

export function findSpace(db: Db, id: string): Promise<SpaceRow | undefined> {
  return db.selectFrom("spaces").selectAll().where("id", "=", id).executeTakeFirst();
}

export function listSpaces(db: Db): Promise<SpaceRow[]> {
  return db.selectFrom("spaces").selectAll().orderBy("created_at").execute();
}

export function updateSpace(
  db: Db,
  id: string,
  changes: Partial<Pick<SpaceRow, "name" | "tier" | "max_session_duration">>,
): Promise<SpaceRow | undefined> {
  return db.updateTable("spaces").set(changes).where("id", "=", id).returningAll().executeTakeFirst();
}

export function insertApiKey(
  db: Db,
  key: { id: string; space_id: string; name: string; prefix: string; key_hash: string },
): Promise<ApiKeyRow> {
  return db.insertInto("api_keys").values(key).returningAll().executeTakeFirstOrThrow();
}

export function listApiKeys(db: Db, spaceId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("space_id", "=", spaceId)
    .orderBy("created_at")
    .execute();
}

export function findApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
}

export function revokeApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable("api_keys")
    .set({ revoked_at: sql`coalesce(revoked_at, now())` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** The live key with this hash, and its space. */
export function findActiveKeyByHash(db: Db, keyHash: string) {
  return db
    .selectFrom("api_keys")
    .innerJoin("spaces", "spaces.id", "api_keys.space_id")
    .selectAll("api_keys")
    .select([
      "spaces.name as space_name",
      "spaces.tier",
      "spaces.max_session_duration",
      "spaces.created_at as space_created_at",
    ])
    .where("api_keys.key_hash", "=", keyHash)
    .where("api_keys.revoked_at", "is", null)
    .executeTakeFirst();
}

export function currentSigningKey(db: Db): Promise<SigningKeyRow | undefined> {
  return db.selectFrom("signing_keys").selectAll().where("current", "=", true).executeTakeFirst();
}

/** Keys that may still have live tokens: current ones, and those retired after `retiredAfter`. */
export function verifyingKeys(db: Db, retiredAfter: Date): Promise<SigningKeyRow[]> {
  return db
    .selectFrom("signing_keys")
    .selectAll()
    .where((eb) => eb.or([eb("retired_at", "is", null), eb("retired_at", ">", retiredAfter)]))
    .orderBy("created_at", "desc")
    .execute();
}

/** Makes `key` the current key, retiring the previous one, under a lock so replicas do it once. */
export async function installSigningKey(
  db: Kysely<TokensDatabase>,
  key: { kid: string; alg: string; public_jwk: string; private_jwk_sealed: string },
  onlyIfNone: boolean,
  now: Date,
): Promise<SigningKeyRow> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('avatar.tokens.signing_key'))`.execute(trx);
    const existing = await currentSigningKey(trx);
    if (existing && onlyIfNone) return existing;
    await trx
      .updateTable("signing_keys")
      .set({ current: false, retired_at: now })
      .where("current", "=", true)
      .execute();
    return trx
      .insertInto("signing_keys")
      .values({ ...key, current: true })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}
