import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreationBatch, type NewSessionValues } from "../src/created-insert.js";
import type { SessionsDatabase } from "../src/schema.js";
import {
  AVATAR,
  harness,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
  SPACE_A,
  TestClock,
} from "./support.js";

/** Creations that arrive together share one insert (group commit), each still answered on its own. */

let t: SessionsTestDb;

beforeAll(async () => {
  t = await openSessionsDb();
});
afterAll(async () => {
  await t?.close();
});

function newValues(fields: Partial<NewSessionValues> = {}): NewSessionValues {
  // The time of the service's test clock, which this file's harness also runs on.
  const now = new TestClock().now();
  return {
    id: randomUUID(),
    space_id: SPACE_A,
    api_key_id: null,
    state: "CREATED",
    mode: "LITE",
    is_sandbox: false,
    source: "API",
    avatar_id: AVATAR,
    embed_id: null,
    context_id: null,
    voice_agent_id: null,
    memory_id: null,
    config: "{}",
    credit_rate: 1,
    max_session_duration: 600,
    created_at: now,
    updated_at: now,
    last_activity_at: now,
    connection_state: "NEW",
    start_deadline_at: new Date(now.getTime() + 60_000),
    ...fields,
  };
}

/** The test database, counting the statements sent through it. */
function counted(db: Kysely<SessionsDatabase>) {
  const counter = { statements: 0 };
  const wrapped = {
    executeQuery: (query: Parameters<Kysely<SessionsDatabase>["executeQuery"]>[0]) => {
      counter.statements++;
      return db.executeQuery(query);
    },
  } as unknown as Kysely<SessionsDatabase>;
  return { db: wrapped, counter };
}

describe("CreationBatch", () => {
  it("inserts the creations of one turn in one statement, each row with its notice", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db);
    const items = Array.from({ length: 12 }, () => newValues());
    const rows = await Promise.all(items.map((item) => batch.insert(item)));
    expect(counter.statements).toBe(1);
    expect(rows.map((r) => r?.id)).toEqual(items.map((i) => i.id));
    const ids = items.map((i) => i.id);
    const notices = await t.db
      .selectFrom("session_events")
      .select(["session_id", "type"])
      .where("session_id", "in", ids)
      .execute();
    expect(notices).toHaveLength(12);
    expect(new Set(notices.map((n) => n.type))).toEqual(new Set(["session.created"]));
    expect(new Set(notices.map((n) => n.session_id))).toEqual(new Set(ids));
  });

  it("takes at most maxRows per statement, and an id once: a second creation of it finds the row made", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db, 4);
    const first = newValues();
    const again: NewSessionValues = { ...first, space_id: randomUUID() };
    const others = Array.from({ length: 5 }, () => newValues());
    const [a, b, ...rest] = await Promise.all([first, again, ...others].map((i) => batch.insert(i)));
    expect(a?.space_id).toBe(SPACE_A);
    expect(b).toBeUndefined();
    expect(rest.every((r) => r !== undefined)).toBe(true);
    expect(counter.statements).toBe(2);
  });

  it("fails only the creation the database refuses when a shared statement fails", async () => {
    const batch = new CreationBatch(t.db);
    const good = [newValues(), newValues()];
    const bad = newValues({ connection_state: "NOT_A_STATE" as never });
    const outcomes = await Promise.allSettled(
      [good[0], bad, good[1]].map((i) => batch.insert(i as NewSessionValues)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const stored = await t.db
      .selectFrom("sessions")
      .select("id")
      .where(
        "id",
        "in",
        [...good, bad].map((i) => i.id),
      )
      .execute();
    expect(stored.map((s) => s.id).sort()).toEqual(good.map((i) => i.id).sort());
  });

  it("serves concurrent CreateSession calls of the service, each answered and stored", async () => {
    const h = harness(t.db);
    const sessions = await Promise.all(Array.from({ length: 10 }, () => newSession(h.client)));
    const stored = await t.db
      .selectFrom("sessions")
      .select(["id", "state"])
      .where(
        "id",
        "in",
        sessions.map((s) => s.id),
      )
      .execute();
    expect(stored.map((r) => r.id).sort()).toEqual(sessions.map((s) => s.id).sort());
    expect(new Set(stored.map((r) => r.state))).toEqual(new Set(["CREATED"]));
  });
});
