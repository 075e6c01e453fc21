import { randomUUID } from "node:crypto";
import { SessionCreatedSchema } from "@avatar/contracts/sessions";
import { consumeEvent, topics } from "@avatar/runtime";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreationBatch, type NewCreated } from "../src/created-insert.js";
import type { SessionsDatabase } from "../src/schema.js";
import {
  AVATAR,
  eventually,
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

function newCreated(fields: Partial<NewCreated["values"]> = {}): NewCreated {
  // The time of the service's test clock, which this file's harness also runs on.
  const now = new TestClock().now();
  const id = randomUUID();
  return {
    values: {
      id,
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
    },
    event: toBinary(SessionCreatedSchema, create(SessionCreatedSchema, {})),
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
  it("inserts the creations of one turn in one statement, each row with its notice and its outbox event", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db);
    const items = Array.from({ length: 12 }, () => newCreated());
    const rows = await Promise.all(items.map((item) => batch.insert(item)));
    expect(counter.statements).toBe(1);
    expect(rows.map((r) => r?.id)).toEqual(items.map((i) => i.values.id));
    const ids = items.map((i) => i.values.id);
    const notices = await t.db
      .selectFrom("session_events")
      .select(["session_id", "type"])
      .where("session_id", "in", ids)
      .execute();
    expect(notices).toHaveLength(12);
    expect(new Set(notices.map((n) => n.type))).toEqual(new Set(["session.created"]));
    const outbox = await t.db.selectFrom("outbox").select(["msg_id", "subject"]).execute();
    for (const id of ids) {
      expect(outbox.filter((o) => o.msg_id === `${id}.created`)).toEqual([
        { msg_id: `${id}.created`, subject: topics.sessionCreated.subject },
      ]);
    }
  });

  it("takes at most maxRows per statement, and an id once: a second creation of it finds the row made", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db, 4);
    const first = newCreated();
    const again: NewCreated = { ...first, values: { ...first.values, space_id: randomUUID() } };
    const others = Array.from({ length: 5 }, () => newCreated());
    const [a, b, ...rest] = await Promise.all([first, again, ...others].map((i) => batch.insert(i)));
    expect(a?.space_id).toBe(SPACE_A);
    expect(b).toBeUndefined();
    expect(rest.every((r) => r !== undefined)).toBe(true);
    expect(counter.statements).toBe(2);
  });

  it("fails only the creation the database refuses when a shared statement fails", async () => {
    const batch = new CreationBatch(t.db);
    const good = [newCreated(), newCreated()];
    const bad = newCreated({ connection_state: "NOT_A_STATE" as never });
    const outcomes = await Promise.allSettled(
      [good[0], bad, good[1]].map((i) => batch.insert(i as NewCreated)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const stored = await t.db
      .selectFrom("sessions")
      .select("id")
      .where(
        "id",
        "in",
        [...good, bad].map((i) => i.values.id),
      )
      .execute();
    expect(stored.map((s) => s.id).sort()).toEqual(good.map((i) => i.values.id).sort());
  });

  it("serves concurrent CreateSession calls of the service, each answered and announced", async () => {
    const h = harness(t.db);
    const seen = new Set<string>();
    const consumer = await consumeEvent(h.bus, topics.sessionCreated, "creation-batch-test", (e) => {
      if (e.session) seen.add(e.session.id);
    });
    const sessions = await Promise.all(Array.from({ length: 10 }, () => newSession(h.client)));
    await h.app.scheduler.runOnce();
    await eventually(async () => expect(seen.size).toBe(10));
    expect([...seen].sort()).toEqual(sessions.map((s) => s.id).sort());
    await consumer.unsubscribe();
  });
});
