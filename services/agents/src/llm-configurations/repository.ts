import type { Db, LlmConfigurationRow } from "../schema.js";

/** Plain data access for LLM configurations. */

export interface LlmConfigurationInput {
  id: string;
  space_id: string;
  display_name: string;
  model_name: string;
  secret_id: string;
  base_url: string;
}

export function insertLlmConfiguration(db: Db, input: LlmConfigurationInput): Promise<LlmConfigurationRow> {
  return db.insertInto("llm_configurations").values(input).returningAll().executeTakeFirstOrThrow();
}

export function findLlmConfiguration(db: Db, id: string): Promise<LlmConfigurationRow | undefined> {
  return db.selectFrom("llm_configurations").selectAll().where("id", "=", id).executeTakeFirst();
}

export function listLlmConfigurations(db: Db, spaceId: string): Promise<LlmConfigurationRow[]> {
  return db
    .selectFrom("llm_configurations")
    .selectAll()
    .where("space_id", "=", spaceId)
    .orderBy("seq", "desc")
    .execute();
}

export type LlmConfigurationChanges = Partial<
  Pick<LlmConfigurationInput, "display_name" | "model_name" | "secret_id" | "base_url">
>;

export function updateLlmConfiguration(
  db: Db,
  spaceId: string,
  id: string,
  changes: LlmConfigurationChanges,
): Promise<LlmConfigurationRow | undefined> {
  return db
    .updateTable("llm_configurations")
    .set({ ...changes, updated_at: new Date() })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteLlmConfiguration(db: Db, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("llm_configurations")
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
