import { genericPlans, openServiceDb, type ServiceTestDb } from "@avatar/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dueDeliveries } from "../src/dispatcher.js";
import { migrations } from "../src/migrations/index.js";
import type { WebhooksDatabase } from "../src/schema.js";

/** The dispatcher's round finds due deliveries through the partial index, also in a generic plan. */

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
  expect(statement?.plan).toContain("using deliveries_due on deliveries");
  expect(statement?.plan).not.toMatch(/Seq Scan on deliveries/);
});
