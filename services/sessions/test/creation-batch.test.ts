import { randomUUID } from "node:crypto";
import { SessionMode } from "@avatar/contracts/common";
import {
  connectErrorOf,
  errorDetailOf,
  MAX_BATCH_ITEMS,
  REQUEST_ID_HEADER,
  readConfig,
} from "@avatar/runtime";
import { collectingLogger, gate, nextTurn, withTableAway } from "@avatar/testkit";
import { Code } from "@connectrpc/connect";
import type { CompiledQuery, Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreationBatch, type NewSessionValues } from "../src/created-insert.js";
import type { SessionsDatabase } from "../src/schema.js";
import { sessionSettings } from "../src/settings.js";
import {
  API_KEY_ID,
  config,
  defined,
  failure,
  type Harness,
  harness,
  newSession,
  newSessionValues,
  openSessionsDb,
  type SessionsTestDb,
  SPACE_A,
} from "./support.js";

/** Creations that arrive together share one insert (group commit), each still answered on its own. */

let t: SessionsTestDb;

beforeAll(async () => {
  t = await openSessionsDb();
});
afterAll(async () => {
  await t?.close();
});

/**
 * The test database, counting the statements sent through it and the parameters of each; with `hold`,
 * the first statement waits for it before it is sent.
 */
function counted(db: Kysely<SessionsDatabase>, hold?: Promise<void>) {
  const counter = { statements: 0, parameters: [] as number[] };
  const wrapped = {
    executeQuery: async (query: CompiledQuery) => {
      counter.parameters.push(query.parameters.length);
      if (counter.statements++ === 0) await hold;
      return db.executeQuery(query);
    },
  } as unknown as Kysely<SessionsDatabase>;
  return { db: wrapped, counter };
}

/** The ids among `ids` that have a stored session, sorted. */
async function storedIds(ids: string[]): Promise<string[]> {
  const rows = await t.db.selectFrom("sessions").select("id").where("id", "in", ids).execute();
  return rows.map((r) => r.id).sort();
}

describe("CreationBatch", () => {
  it("inserts the creations of one turn in one statement, and nothing else", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db);
    const items = Array.from({ length: 12 }, () => newSessionValues());
    const rows = await Promise.all(items.map((item) => batch.insert(item)));
    expect(counter.statements).toBe(1);
    expect(rows.map((r) => r?.id)).toEqual(items.map((i) => i.id));
    const ids = items.map((i) => i.id);
    expect(await storedIds(ids)).toEqual([...ids].sort());
    // Their session.created notices are read from the rows, not stored (records.test.ts).
    const stored = await t.db
      .selectFrom("session_events")
      .select("id")
      .where("session_id", "in", ids)
      .execute();
    expect(stored).toEqual([]);
  });

  it("answers a creation that asked only for its id with at least its id, and alone with no more", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db);
    const [byId, byRow] = [newSessionValues(), newSessionValues()];
    const [idOnly, row] = await Promise.all([batch.insert(byId, "id"), batch.insert(byRow)]);
    expect(idOnly?.id).toBe(byId.id);
    expect(row).toMatchObject({ id: byRow.id, state: "CREATED", mode: "LITE", credit_rate: 1 });
    expect(counter.statements).toBe(1);
    const alone = newSessionValues();
    expect(await batch.insert(alone, "id")).toEqual({ id: alone.id });
    const stored = await t.db.selectFrom("sessions").select("id").where("id", "=", alone.id).execute();
    expect(stored).toEqual([{ id: alone.id }]);
  });

  it("takes at most maxRows per statement, and an id once: a second creation of it finds the row made", async () => {
    const { db, counter } = counted(t.db);
    const batch = new CreationBatch(db, { maxRows: 4 });
    const first = newSessionValues();
    const again: NewSessionValues = { ...first, space_id: randomUUID() };
    const others = Array.from({ length: 5 }, () => newSessionValues());
    const [a, b, ...rest] = await Promise.all([first, again, ...others].map((i) => batch.insert(i)));
    expect(a?.space_id).toBe(SPACE_A);
    expect(b).toBeUndefined();
    expect(rest.every((r) => r !== undefined)).toBe(true);
    expect(counter.statements).toBe(2);
  });

  it.each([
    ["1: one statement out at a time, later turns' creations share the next", "1", 1, [1, 3]],
    ["0 (the default): a statement per turn, however many are out", "0", 4, [1, 1, 1, 1]],
  ])(
    "with SESSIONS_CREATION_INSERTS_IN_FLIGHT %s",
    async (_name, setting, sentWhileHeld, rowsPerStatement) => {
      const hold = gate();
      const { db, counter } = counted(t.db, hold.promise);
      const { SESSIONS_CREATION_INSERTS_IN_FLIGHT } = readConfig(sessionSettings, {
        SESSIONS_CREATION_INSERTS_IN_FLIGHT: setting,
      });
      const batch = new CreationBatch(db, { maxInFlight: SESSIONS_CREATION_INSERTS_IN_FLIGHT });
      const items = Array.from({ length: 4 }, () => newSessionValues());
      const answers = [];
      for (const values of items) {
        answers.push(batch.insert(values));
        await nextTurn();
      }
      expect(counter.statements).toBe(sentWhileHeld);
      hold.open();
      const rows = await Promise.all(answers);
      expect(rows.map((r) => r?.id)).toEqual(items.map((v) => v.id));
      const perRow = counter.parameters[0] ?? 0;
      expect(counter.parameters).toEqual(rowsPerStatement.map((n) => n * perRow));
      expect(await storedIds(items.map((v) => v.id))).toEqual(items.map((v) => v.id).sort());
    },
  );

  it("refuses a SESSIONS_CREATION_INSERTS_IN_FLIGHT that is not a whole number from 0 to 64", () => {
    for (const bad of ["-1", "65", "two", "1.5"]) {
      expect(() => readConfig(sessionSettings, { SESSIONS_CREATION_INSERTS_IN_FLIGHT: bad })).toThrow(
        /SESSIONS_CREATION_INSERTS_IN_FLIGHT/,
      );
    }
  });

  it("fails only the creation the database refuses when a shared statement fails", async () => {
    const batch = new CreationBatch(t.db);
    const good = [newSessionValues(), newSessionValues()];
    const bad = newSessionValues({ connection_state: "NOT_A_STATE" as never });
    const outcomes = await Promise.allSettled(
      [good[0], bad, good[1]].map((i) => batch.insert(i as NewSessionValues)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await storedIds([...good, bad].map((i) => i.id))).toEqual(good.map((i) => i.id).sort());
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

describe("CreateSessionsBatch", () => {
  const request = (fields: Partial<Parameters<Harness["client"]["createSession"]>[0]> = {}) => ({
    sessionId: randomUUID(),
    spaceId: SPACE_A,
    apiKeyId: API_KEY_ID,
    config: config({ mode: SessionMode.LITE }),
    maxSessionDuration: 600,
    ...fields,
  });

  it("creates each session as CreateSession would, and answers each refusal on its own with its field", async () => {
    const h = harness(t.db);
    const good = [request(), request()] as const;
    const badAvatar = request({ config: config({ avatarId: "not-a-uuid" }) });
    const noConfig = request({ config: undefined });
    const res = await h.client.createSessionsBatch({ sessions: [good[0], badAvatar, good[1], noConfig] });
    expect(res.outcomes.map((o) => o.sessionId)).toEqual(
      [good[0], badAvatar, good[1], noConfig].map((r) => r?.sessionId),
    );
    expect(res.outcomes.map((o) => o.error === undefined)).toEqual([true, false, true, false]);
    const refused = res.outcomes.filter((o) => o.error).map((o) => connectErrorOf(defined(o.error)));
    expect(refused.map((e) => [e.code, errorDetailOf(e)?.field])).toEqual([
      [Code.InvalidArgument, "config.avatar_id"],
      [Code.InvalidArgument, "config"],
    ]);
    const stored = await t.db
      .selectFrom("sessions")
      .select(["id", "mode", "api_key_id"])
      .where(
        "id",
        "in",
        [...good, badAvatar, noConfig].map((r) => r.sessionId),
      )
      .execute();
    expect(stored.map((r) => r.id).sort()).toEqual(good.map((r) => r.sessionId).sort());
    expect(new Set(stored.map((r) => `${r.mode} ${r.api_key_id}`))).toEqual(new Set([`LITE ${API_KEY_ID}`]));
  });

  it("logs an item's unexpected failure under the batch call's request id", async () => {
    const { log, records } = collectingLogger();
    const h = harness(t.db, { log });
    await withTableAway({ url: t.url, schema: "sessions" }, "sessions", async () => {
      const res = await h.client.createSessionsBatch(
        { sessions: [request(), request()] },
        { headers: { [REQUEST_ID_HEADER]: "req-batch-1" } },
      );
      expect(res.outcomes.map((o) => o.error?.code)).toEqual([Code.Internal, Code.Internal]);
    });
    const failed = records().filter((r) => r.msg === "rpc failed unexpectedly");
    expect(failed.map((r) => r.request_id)).toEqual(["req-batch-1", "req-batch-1"]);
  });

  it("answers a retried creation with its session and refuses its id in another space", async () => {
    const h = harness(t.db);
    const first = request();
    await h.client.createSession(first);
    const res = await h.client.createSessionsBatch({
      sessions: [first, { ...first, spaceId: randomUUID() }],
    });
    expect(res.outcomes[0]?.error).toBeUndefined();
    expect(res.outcomes[1]?.error?.code).toBe(Code.AlreadyExists);
  });

  it("answers an empty batch with no outcomes and refuses more than it takes", async () => {
    const h = harness(t.db);
    expect((await h.client.createSessionsBatch({ sessions: [] })).outcomes).toEqual([]);
    const tooMany = Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => request());
    const err = await failure(h.client.createSessionsBatch({ sessions: tooMany }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(err)?.field).toBe("sessions");
    expect(await storedIds(tooMany.map((r) => r.sessionId))).toEqual([]);
  });
});
