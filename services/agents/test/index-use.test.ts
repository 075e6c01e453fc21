import { genericPlans, openServiceDb, type ServiceTestDb } from "@avatar/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrations } from "../src/migrations/index.js";
import type { AgentsDatabase } from "../src/schema.js";
import { listVoiceAgents } from "../src/voice-agents/repository.js";

/**
 * The public voice agents are listed through their partial index, also in a generic plan: Postgres keeps
 * one for a prepared statement after five runs, and a generic plan cannot tell that `is_public = $1`
 * meets the index's `where is_public` (services/sessions/test/index-use.test.ts says more).
 */

let t: ServiceTestDb<AgentsDatabase>;

beforeAll(async () => {
  t = await openServiceDb<AgentsDatabase>("agents", migrations);
});
afterAll(async () => {
  await t?.close();
});

it("the public voice agents are read through voice_agents_public_idx in their generic plan", async () => {
  const [statement, ...more] = await genericPlans<AgentsDatabase>(t.url, "agents", (db) =>
    listVoiceAgents(db, { kind: "public" }),
  );
  expect(more).toEqual([]);
  expect(statement?.indexes).toEqual(["voice_agents_public_idx"]);
  expect(statement?.seqScans).toEqual([]);
});
