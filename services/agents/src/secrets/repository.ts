import type { Db, SecretRow, SecretTypeValue } from "../schema.js";

/** Plain data access for secrets. Only sealed values ever reach the database. */

export interface SecretInput {
  id: string;
  space_id: string;
  secret_name: string;
  secret_type: SecretTypeValue;
  sealed_value: string;
  key_id: string;
  allowed_hosts: string[];
}

export function insertSecret(db: Db, input: SecretInput): Promise<SecretRow> {
  return db.insertInto("secrets").values(input).returningAll().executeTakeFirstOrThrow();
}

export function findSecret(db: Db, id: string): Promise<SecretRow | undefined> {
  return db.selectFrom("secrets").selectAll().where("id", "=", id).executeTakeFirst();
}

export function listSecrets(db: Db, spaceId: string): Promise<SecretRow[]> {
  return db
    .selectFrom("secrets")
    .selectAll()
    .where("space_id", "=", spaceId)
    .orderBy("seq", "desc")
    .execute();
}

export async function deleteSecret(db: Db, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("secrets")
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
