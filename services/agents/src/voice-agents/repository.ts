import { sql } from "kysely";
import type { AgentTypeValue, Db, VoiceAgentRow } from "../schema.js";

/** Plain data access for voice agents. */

export interface VoiceAgentInput {
  id: string;
  space_id: string;
  name: string;
  agent_type: AgentTypeValue;
  configuration: Record<string, unknown>;
  is_public: boolean;
}

export function insertVoiceAgent(db: Db, input: VoiceAgentInput): Promise<VoiceAgentRow> {
  return db
    .insertInto("voice_agents")
    .values({ ...input, configuration: JSON.stringify(input.configuration) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findVoiceAgent(db: Db, id: string): Promise<VoiceAgentRow | undefined> {
  return db.selectFrom("voice_agents").selectAll().where("id", "=", id).executeTakeFirst();
}

export type VoiceAgentScopeFilter = { kind: "space"; spaceId: string } | { kind: "public" };

/**
 * The predicate of voice_agents_public_idx, written as the index writes it: as `is_public = $1` a
 * prepared statement's generic plan could not use the index (services/agents/test/index-use.test.ts).
 */
const publicOnes = sql<boolean>`is_public`;

/** Newest first. */
export function listVoiceAgents(db: Db, scope: VoiceAgentScopeFilter): Promise<VoiceAgentRow[]> {
  const base = db.selectFrom("voice_agents").selectAll();
  const filtered =
    scope.kind === "public" ? base.where(publicOnes) : base.where("space_id", "=", scope.spaceId);
  return filtered.orderBy("seq", "desc").execute();
}

export type VoiceAgentChanges = Partial<
  Pick<VoiceAgentInput, "name" | "agent_type" | "configuration" | "is_public">
>;

export function updateVoiceAgent(
  db: Db,
  spaceId: string,
  id: string,
  changes: VoiceAgentChanges,
): Promise<VoiceAgentRow | undefined> {
  const { configuration, ...rest } = changes;
  return db
    .updateTable("voice_agents")
    .set({
      ...rest,
      ...(configuration ? { configuration: JSON.stringify(configuration) } : {}),
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteVoiceAgent(db: Db, spaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("voice_agents")
    .where("id", "=", id)
    .where("space_id", "=", spaceId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
