import { genericPlans } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grant } from "../src/ledger.js";
import {
  dueSessionIds,
  extendWorkerDeadlines,
  runningSessionIdsOnAvatar,
  waitingForTakeoverIds,
} from "../src/repository.js";
import type { SessionsDatabase } from "../src/schema.js";
import { AVATAR, openSessionsDb, type SessionsTestDb, SPACE_A, TestClock } from "./support.js";

/**
 * The statements that find sessions across the whole table (the timers' and the takeovers' rounds, the
 * leases, the sessions on an avatar) and the ledger's lookup of a repeated grant reach their rows through
 * partial indexes, also with the plan a prepared statement keeps after five runs (prepared-statements.ts).
 * With `state <> $1` that plan read every row: 40 ms a round at 120,000 sessions (`pnpm bench`,
 * 2026-12-06), twice a second.
 */

let t: SessionsTestDb;

beforeAll(async () => {
  t = await openSessionsDb();
});
afterAll(async () => {
  await t?.close();
});

describe("the sessions service's searches across sessions", () => {
  it.each([
    ["the timers' round", "sessions_due_idx", (db) => dueSessionIds(db, new TestClock().now(), 100)],
    ["the takeovers' round", "sessions_takeover_idx", (db) => waitingForTakeoverIds(db, 200)],
    [
      "the leases given anew at a start",
      "sessions_worker_idx",
      (db) => extendWorkerDeadlines(db, new TestClock().now()),
    ],
    [
      "the sessions on an avatar",
      "sessions_running_avatar_idx",
      (db) => runningSessionIdsOnAvatar(db, AVATAR),
    ],
  ] satisfies [string, string, Parameters<typeof genericPlans<SessionsDatabase>>[2]][])(
    "%s is served by %s in its generic plan, not by a sequential scan",
    async (_, index, run) => {
      const [statement, ...more] = await genericPlans<SessionsDatabase>(t.url, "sessions", run);
      expect(more).toEqual([]);
      expect(statement?.indexes).toContain(index);
      expect(statement?.seqScans).toEqual([]);
    },
  );
});

describe("the ledger", () => {
  it("finds the grant a repeated idempotency key made through ledger_grant_idempotency", async () => {
    const input = {
      spaceId: SPACE_A,
      amount: "5",
      note: "test",
      idempotencyKey: "k-1",
      at: new TestClock().now(),
    };
    const plans = await genericPlans<SessionsDatabase>(t.url, "sessions", async (db) => {
      await db.transaction().execute((trx) => grant(trx, input));
      expect(await db.transaction().execute((trx) => grant(trx, input))).toEqual({ kind: "repeated" });
    });
    const lookup = plans.find((p) => p.sql.startsWith('select "amount" from "ledger"'));
    expect(lookup?.indexes).toEqual(["ledger_grant_idempotency"]);
    for (const { seqScans } of plans) expect(seqScans).toEqual([]);
  });
});
