import { randomUUID } from "node:crypto";
import { genericPlans, openServiceDb, type ServiceTestDb } from "@avatar/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dueDeliveries, pendingCount } from "../src/dispatcher.js";
import { migrations } from "../src/migrations/index.js";
import type { WebhooksDatabase } from "../src/schema.js";

/**
 * The dispatcher's round and the backlog's gauge find pending deliveries through the partial index, also
 * in a generic plan (services/sessions/test/index-use.test.ts says why).
 */

let t: ServiceTestDb<WebhooksDatabase>;

beforeAll(async () => {
  t = await openServiceDb<WebhooksDatabase>("webhooks", migrations);
});
afterAll(async () => {
  await t?.close();
});

it("the due deliveries are found by deliveries_due in their generic plan, not by a sequential scan", async () => {
  const [statement, ...more] = await genericPlans<WebhooksDatabase>(t.url, "webhooks", (db) =>
    db.transaction().execute((trx) => dueDeliveries(trx, new Date("2026-12-06T10:00:00Z"), 20)),
  );
  expect(more).toEqual([]);
  expect(statement?.indexes).toContain("deliveries_due");
  expect(statement?.seqScans).toEqual([]);
});

it("the backlog's count reads deliveries_due in its generic plan, not every delivery", async () => {
  const [statement, ...more] = await genericPlans<WebhooksDatabase>(t.url, "webhooks", (db) =>
    pendingCount(db),
  );
  expect(more).toEqual([]);
  expect(statement?.indexes).toEqual(["deliveries_due"]);
  expect(statement?.seqScans).toEqual([]);
});

it("the backlog counts the pending deliveries only", async () => {
  const at = new Date("2026-12-06T10:00:00Z");
  const endpointId = randomUUID();
  await t.db
    .insertInto("endpoints")
    .values({
      id: endpointId,
      space_id: randomUUID(),
      url: "https://example.com/hook",
      event_types: "{}",
      description: "",
      secret_sealed: "sealed",
      created_at: at,
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
    })
    .execute();
  const delivery = (status: "pending" | "delivered" | "failed") => ({
    id: randomUUID(),
    endpoint_id: endpointId,
    message_id: randomUUID(),
    event_type: "session.ended",
    payload: "{}",
    status,
    created_at: at,
    next_attempt_at: status === "pending" ? at : null,
    delivered_at: status === "delivered" ? at : null,
  });
  await t.db
    .insertInto("deliveries")
    .values([delivery("pending"), delivery("delivered"), delivery("failed"), delivery("pending")])
    .execute();
  expect(await pendingCount(t.db)).toBe(2);
});
