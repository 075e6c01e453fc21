import { randomUUID } from "node:crypto";
import { migrateToLatest } from "@avatar/runtime";
import { openServiceDb } from "@avatar/testkit";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCreated } from "../src/created-insert.js";
import * as thisMigration from "../src/migrations/20261127_0008_created_notice_from_record.js";
import { migrations } from "../src/migrations/index.js";
import type { SessionsDatabase } from "../src/schema.js";
import { newSessionValues, type SessionsTestDb } from "./support.js";

/** 20261127_0008: stored session.created notices become the record's `history_deleted_at`, and back. */

const THIS_MIGRATION = "20261127_0008_created_notice_from_record";
const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < THIS_MIGRATION));

let t: SessionsTestDb;
beforeAll(async () => {
  t = await openServiceDb<SessionsDatabase>("sessions", earlier);
});
afterAll(async () => {
  await t?.close();
});

const eventTypes = async (db: Kysely<SessionsDatabase>, sessionId: string) =>
  (
    await db
      .selectFrom("session_events")
      .select("type")
      .where("session_id", "=", sessionId)
      .orderBy("seq")
      .execute()
  ).map((e) => e.type);

describe("the created notice taken from the record", () => {
  it("keeps a history that had its notice and one that was deleted apart, both ways", async () => {
    const [kept, deleted] = [newSessionValues(), newSessionValues()];
    await insertCreated(t.db, [kept, deleted], "id");
    // As the earlier schema stored them: a notice per session, then a later event; one history deleted.
    const notice = (id: string) =>
      sql`insert into session_events (id, session_id, type, payload, created_at)
        values (${randomUUID()}, ${id}, 'session.created', '{}'::jsonb, now())`.execute(t.db);
    await notice(kept.id);
    await notice(deleted.id);
    await t.db
      .insertInto("session_events")
      .values({ id: randomUUID(), session_id: kept.id, type: "later", payload: "{}", created_at: new Date() })
      .execute();
    await t.db.deleteFrom("session_events").where("session_id", "=", deleted.id).execute();

    expect(await migrateToLatest(t.db as Kysely<unknown>, "sessions", migrations)).toEqual([THIS_MIGRATION]);
    const marks = await t.db
      .selectFrom("sessions")
      .select(["id", "history_deleted_at"])
      .where("id", "in", [kept.id, deleted.id])
      .execute();
    const mark = (id: string) => marks.find((m) => m.id === id)?.history_deleted_at;
    expect(mark(kept.id)).toBeNull();
    expect(mark(deleted.id)).toBeInstanceOf(Date);
    expect(await eventTypes(t.db, kept.id)).toEqual(["later"]);
    expect(await eventTypes(t.db, deleted.id)).toEqual([]);

    await thisMigration.down(t.db as Kysely<unknown>);
    const notices = await t.db
      .selectFrom("session_events")
      .select(["session_id", "created_at"])
      .where("type", "=", "session.created")
      .where("session_id", "in", [kept.id, deleted.id])
      .execute();
    expect(notices).toEqual([{ session_id: kept.id, created_at: kept.created_at }]);
    const columns = await sql<{ name: string }>`select column_name as name from information_schema.columns
      where table_schema = 'sessions' and table_name = 'sessions'`.execute(t.db);
    expect(columns.rows.map((c) => c.name)).not.toContain("history_deleted_at");
    expect(columns.rows.map((c) => c.name)).toContain("created_at");
  });
});
