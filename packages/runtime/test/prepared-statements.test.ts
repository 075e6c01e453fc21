import { sql, type Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../src/db.js";
import { isStalePlan, StatementNames } from "../src/prepared-statements.js";
import { createTestDatabase, type TestDatabase } from "./support.js";

describe("StatementNames", () => {
  it("names a query or data change the second time it is seen, and keeps that name", () => {
    const names = new StatementNames();
    const text = "select * from t where id = $1";
    expect(names.nameFor(text)).toBeUndefined();
    const name = names.nameFor(text);
    expect(name).toMatch(/^a0_\d+$/);
    expect(names.nameFor(text)).toBe(name);
    expect(names.nameFor("insert into t values ($1)")).toBeUndefined();
  });

  it("never names transaction control or schema changes", () => {
    const names = new StatementNames();
    for (const text of ["begin", "commit", "create table t (id int)", "savepoint a", "set local x = 1"]) {
      names.nameFor(text);
      expect(names.nameFor(text)).toBeUndefined();
    }
  });

  it("names at most its limit of statements; the rest run unnamed", () => {
    const names = new StatementNames(2);
    const texts = ["select 1", "select 2", "select 3"];
    for (const t of texts) names.nameFor(t);
    expect(texts.map((t) => names.nameFor(t) !== undefined)).toEqual([true, true, false]);
  });

  it("gives every statement a new name after forgetAll", () => {
    const names = new StatementNames();
    names.nameFor("select 1");
    const before = names.nameFor("select 1");
    names.forgetAll();
    expect(names.nameFor("select 1")).toBeUndefined();
    const after = names.nameFor("select 1");
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
  });
});

describe("createDb's prepared statements (Postgres)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  const prepared = async (db: ReturnType<typeof createDb>) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map(
      (r) => r.statement,
    );

  it("prepares a statement the pool sends again, on its connection", async () => {
    const db = createDb({ url: database.url, schema: "public", poolSize: 1 });
    try {
      await sql`create table items (id int primary key, name text not null)`.execute(db);
      for (let i = 0; i < 3; i++)
        await sql`insert into items (id, name) values (${i}, ${`n${i}`})`.execute(db);
      expect((await prepared(db)).some((s) => s.startsWith("insert into items"))).toBe(true);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from items`.execute(db);
      expect(rows).toEqual([{ n: 3 }]);
    } finally {
      await db.destroy();
    }
  });

  it("does not keep a statement Postgres refused to prepare: it works once its table exists", async () => {
    const db = createDb({ url: database.url, schema: "public", poolSize: 1 });
    try {
      const read = () =>
        sql`select * from later where id = ${1}`.execute(db).then(
          () => "ok",
          (err: unknown) => (err as Error).message,
        );
      // Sent three times: the second and third as a named statement, whose preparation fails.
      expect([await read(), await read(), await read()]).toEqual(
        Array(3).fill('relation "later" does not exist'),
      );
      await sql`create table later (id int)`.execute(db);
      expect([await read(), await read()]).toEqual(["ok", "ok"]);
    } finally {
      await db.destroy();
    }
  });

  type Db = ReturnType<typeof createDb>;
  /**
   * A one-connection pool, with a table of one row whose `select *` the pool has prepared (sent twice),
   * then given a column by a migration: the prepared plan's result type is stale.
   */
  async function afterMigration(
    table: string,
    column: string,
    test: (db: Db, read: (d: Db | Transaction<unknown>) => Promise<{ rows: unknown[] }>) => Promise<void>,
  ) {
    const db = createDb({ url: database.url, schema: "public", poolSize: 1 });
    try {
      await sql`create table ${sql.id(table)} (id int primary key)`.execute(db);
      await sql`insert into ${sql.id(table)} (id) values (1)`.execute(db);
      const read = (d: Db | Transaction<unknown>) =>
        sql<Record<string, unknown>>`select * from ${sql.id(table)} where id = ${1}`.execute(d);
      await read(db);
      await read(db);
      await sql`alter table ${sql.id(table)} add column ${sql.raw(column)}`.execute(db);
      await test(db, read);
    } finally {
      await db.destroy();
    }
  }

  it("answers a prepared `select *` after a migration added a column (outside a transaction)", async () => {
    await afterMigration("notes", "body text not null default 'x'", async (db, read) => {
      expect((await read(db)).rows).toEqual([{ id: 1, body: "x" }]);
      expect((await read(db)).rows).toEqual([{ id: 1, body: "x" }]);
    });
  });

  it("fails a transaction that meets a stale plan once, and the next one works", async () => {
    await afterMigration("marks", "note text", async (db, read) => {
      const failed = await db
        .transaction()
        .execute((trx) => read(trx))
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(isStalePlan(failed)).toBe(true);
      const again = await db.transaction().execute((trx) => read(trx));
      expect(again.rows).toEqual([{ id: 1, note: null }]);
    });
  });
});
