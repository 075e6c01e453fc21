import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../src/db.js";
import { joinInserts, joinInsertsIf } from "../src/joined-inserts.js";
import { createTestDatabase, type TestDatabase } from "./support.js";

interface Db {
  items: { id: string; version: number };
  notes: { item_id: string; at: Date; body: unknown; amount: string; raw: Buffer | null };
}

let database: TestDatabase;
let db: Kysely<Db>;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb<Db>({ url: database.url, schema: "public", poolSize: 2 });
  await sql`create table items (id uuid primary key, version int not null)`.execute(db);
  await sql`create table notes (seq bigserial, item_id uuid, at timestamptz, body jsonb, amount numeric, raw bytea)`.execute(
    db,
  );
});
afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});
beforeEach(async () => {
  await sql`truncate items, notes`.execute(db);
  await db.insertInto("items").values({ id: item, version: 1 }).execute();
});

const item = "8d6f3c0e-0000-4000-8000-000000000001";
const at = new Date("2026-11-27T10:00:00.000Z");
const note = (amount: string) => ({ item_id: item, at, body: JSON.stringify({ n: 1 }), amount, raw: null });
const notes = () =>
  db.selectFrom("notes").select(["item_id", "at", "body", "amount"]).orderBy("amount").execute();

describe("joinInserts", () => {
  it("writes every row with the statement it joins, in one statement", async () => {
    const updated = await joinInserts<Db>(db, [{ into: "notes", rows: [note("1"), note("2")] }])
      .updateTable("items")
      .set({ version: 2 })
      .where("id", "=", item)
      .returning("version")
      .executeTakeFirst();
    expect(updated).toEqual({ version: 2 });
    expect(await notes()).toEqual([
      { item_id: item, at, body: { n: 1 }, amount: "1" },
      { item_id: item, at, body: { n: 1 }, amount: "2" },
    ]);
  });
});

describe("joinInsertsIf", () => {
  /** The item's version moves from `from` to `from + 1` with the notes, only if it is `from`. */
  const bump = (from: number) =>
    joinInsertsIf(
      db.with("changed", (q) =>
        q
          .updateTable("items")
          .set({ version: from + 1 })
          .where("id", "=", item)
          .where("version", "=", from)
          .returning("id"),
      ),
      "changed",
      [{ into: "notes", rows: [note("1"), { ...note("2"), raw: Buffer.from([1, 2]) }] }],
    )
      .selectFrom("changed" as never)
      .selectAll()
      .execute();

  it("writes the rows when the guarding change matched, typed by their columns", async () => {
    expect(await bump(1)).toHaveLength(1);
    expect(await notes()).toEqual([
      { item_id: item, at, body: { n: 1 }, amount: "1" },
      { item_id: item, at, body: { n: 1 }, amount: "2" },
    ]);
    const raw = await db.selectFrom("notes").select("raw").where("amount", "=", "2").executeTakeFirst();
    expect(raw?.raw).toEqual(Buffer.from([1, 2]));
  });

  it("inserts the rows in the order given (a ledger lists them by id)", async () => {
    const amounts = ["5", "3", "9", "1"];
    await joinInsertsIf(
      db.with("changed", (q) =>
        q.updateTable("items").set({ version: 2 }).where("id", "=", item).returning("id"),
      ),
      "changed",
      [
        { into: "notes", rows: amounts.slice(0, 2).map(note) },
        { into: "notes", rows: amounts.slice(2).map(note) },
      ],
    )
      .selectFrom("changed" as never)
      .selectAll()
      .execute();
    const inOrder = await sql<{ amount: string }>`select amount from notes order by seq`.execute(db);
    expect(inOrder.rows.map((r) => r.amount)).toEqual(amounts);
  });

  it("writes nothing when the guarding change matched nothing", async () => {
    expect(await bump(7)).toEqual([]);
    expect(await notes()).toEqual([]);
    expect(await db.selectFrom("items").select("version").execute()).toEqual([{ version: 1 }]);
  });
});
