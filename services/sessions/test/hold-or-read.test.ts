import { randomUUID } from "node:crypto";
import type { KyselyPlugin } from "kysely";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertCreated } from "../src/created-insert.js";
import { holdOrRead } from "../src/ledger.js";
import * as repo from "../src/repository.js";
import {
  defined,
  type Harness,
  harness,
  ledgerOf,
  newSession,
  newSessionValues,
  openSessionsDb,
  type SessionsTestDb,
  TestClock,
} from "./support.js";

/** A start's first step in one statement: minute 0 held by the statement that reads the row. */

let t: SessionsTestDb;
let h: Harness;
let statements = 0;

/** Counts the statements kysely builds (every statement of the lifecycle but the creation's insert). */
const counting: KyselyPlugin = {
  transformQuery: (args) => {
    statements++;
    return args.node;
  },
  transformResult: async (args) => args.result,
};

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db.withPlugin(counting));
});
afterAll(async () => {
  await t?.close();
});

const at = new TestClock().now();

async function space(credits: string) {
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount: credits });
  return spaceId;
}

/** A CREATED session inserted as a mint makes it. */
async function created(fields: Parameters<typeof newSessionValues>[0]) {
  const values = newSessionValues(fields);
  await insertCreated(t.db, [values]);
  return values.id;
}

const balance = async (spaceId: string) =>
  (
    await t.db
      .selectFrom("credit_accounts")
      .select("balance")
      .where("space_id", "=", spaceId)
      .executeTakeFirst()
  )?.balance;

describe("holdOrRead", () => {
  it("holds minute 0 of a paying session: balance, ledger and session in one statement, with its new version", async () => {
    const spaceId = await space("10");
    const id = await created({ space_id: spaceId, credit_rate: 2 });
    const found = defined(await holdOrRead(t.db, { sessionId: id, spaceId, at }));
    expect(found.held).toBe(true);
    expect(found.row).toMatchObject({ id, state: "CREATED", escrow_amount: 2, updated_at: at });
    expect(Number(await balance(spaceId))).toBe(8);
    expect(await ledgerOf(t.db, spaceId, id)).toEqual([["escrow", -2, null]]);
    // The version is the row's as stored: a change on condition of it is made.
    expect(found.row.version).toBe(defined(await repo.findVersioned(t.db, id)).version);
  });

  it("answers the row as it is, held: false, when nothing is to be held or it cannot be", async () => {
    const spaceId = await space("10");
    const otherSpace = await space("10");
    const cases = {
      sandbox: await created({ space_id: spaceId, credit_rate: 0, is_sandbox: true }),
      "another space's": await created({ space_id: otherSpace }),
      "past its start deadline": await created({ space_id: spaceId, start_deadline_at: at }),
      "already held": await created({ space_id: spaceId }),
      "too dear for the balance": await created({ space_id: spaceId, credit_rate: 11 }),
    };
    await t.db
      .updateTable("sessions")
      .set({ escrow_amount: 1 })
      .where("id", "=", cases["already held"])
      .execute();
    for (const [what, id] of Object.entries(cases)) {
      const found = await holdOrRead(t.db, { sessionId: id, spaceId, at });
      expect({ what, held: found?.held, id: found?.row.id }).toEqual({ what, held: false, id });
      expect(found?.row.version).toBe((await repo.findVersioned(t.db, id))?.version);
    }
    expect(Number(await balance(spaceId))).toBe(10);
    expect(await ledgerOf(t.db, spaceId)).toEqual([["grant", 10, null]]);
  });

  it("holds without a space to match (a worker's call), and answers nothing for an unknown session", async () => {
    const spaceId = await space("10");
    const id = await created({ space_id: spaceId });
    expect((await holdOrRead(t.db, { sessionId: id, spaceId: undefined, at }))?.held).toBe(true);
    expect(await holdOrRead(t.db, { sessionId: randomUUID(), spaceId, at })).toBeUndefined();
  });

  it("holds nothing for a session that is not CREATED", async () => {
    const spaceId = await space("10");
    const id = await created({ space_id: spaceId });
    await h.client.stopSession({ spaceId, sessionId: id });
    expect((await holdOrRead(t.db, { sessionId: id, spaceId, at }))?.held).toBe(false);
    expect(Number(await balance(spaceId))).toBe(10);
  });
});

describe("a start", () => {
  it("of a paying session takes two statements: the hold with the read, then the completion", async () => {
    const spaceId = await space("10");
    const s = await newSession(h.client, { spaceId });
    statements = 0;
    await h.client.startSession({ spaceId, sessionId: s.id });
    expect(statements).toBe(2);
    expect(await ledgerOf(t.db, spaceId, s.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
      ["charge", -2, 0],
    ]);
    expect(Number(await balance(spaceId))).toBe(8);
    const row = defined(
      await t.db.selectFrom("sessions").selectAll().where("id", "=", s.id).executeTakeFirst(),
    );
    expect(row).toMatchObject({ state: "STARTED", escrow_amount: 0, credits_consumed: 2 });
    // The sandbox pays nothing: its row is read, and the completion follows.
    const sandbox = await created({ space_id: spaceId, credit_rate: 0, is_sandbox: true });
    statements = 0;
    await h.client.startSession({ spaceId, sessionId: sandbox });
    expect(statements).toBe(2);
    const count = await sql<{
      n: string;
    }>`select count(*) as n from ledger where session_id = ${sandbox}`.execute(t.db);
    expect(count.rows[0]?.n).toBe("0");
  });
});
