import { type Kysely, type Migration, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../src/db.js";
import { type Migrations, migrateToLatest } from "../src/migrate.js";
import { createTestDatabase, settledWithin, type TestDatabase } from "./support.js";

let database: TestDatabase;
const pools: Kysely<unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(pools.map((db) => db.destroy()));
  await database.drop();
});

/** A pool of its own on `schema`, as a separate replica would have. */
function openDb(schema: string): Kysely<unknown> {
  const db = createDb<unknown>({ url: database.url, schema, poolSize: 3 });
  pools.push(db);
  return db;
}

/** A migration that creates `table` and counts how often it ran. */
function createsTable(table: string, runs: Map<string, number>, pauseSeconds = 0): Migration {
  return {
    async up(db) {
      runs.set(table, (runs.get(table) ?? 0) + 1);
      if (pauseSeconds > 0) await sql`select pg_sleep(${pauseSeconds})`.execute(db);
      await db.schema.createTable(table).addColumn("id", "integer").execute();
    },
  };
}

async function tablesOf(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = ${schema} order by table_name
  `.execute(db);
  return rows.map((r) => r.table_name);
}

/** The replicas' lock protocol: one session-level advisory lock per schema. */
const lockSql = (fn: string) => `select ${fn}(hashtext('avatar.migrate.' || $1::text)) as ok`;

/** Runs `fn` with a connection of its own, as another replica would have. */
async function asOtherReplica<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function migrationLockIsFree(schema: string): Promise<boolean> {
  return asOtherReplica(async (client) => {
    const { rows } = await client.query<{ ok: boolean }>(lockSql("pg_try_advisory_lock"), [schema]);
    if (rows[0]?.ok) await client.query(lockSql("pg_advisory_unlock"), [schema]);
    return rows[0]?.ok === true;
  });
}

async function appliedIn(db: Kysely<unknown>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from ${sql.id(schema, "kysely_migration")} order by name
  `.execute(db);
  return rows.map((r) => r.name);
}

describe("migrateToLatest", () => {
  it("creates the schema, applies the migrations in name order there and records them there", async () => {
    const runs = new Map<string, number>();
    const order: string[] = [];
    const migrations: Migrations = {
      "0002_second": {
        up: async (db) => {
          order.push("0002");
          await createsTable("second", runs).up(db);
        },
      },
      "0001_first": {
        up: async (db) => {
          order.push("0001");
          await createsTable("first", runs).up(db);
        },
      },
    };
    const db = openDb("m_order");
    expect(await migrateToLatest(db, "m_order", migrations)).toEqual(["0001_first", "0002_second"]);
    expect(order).toEqual(["0001", "0002"]);
    const tables = await tablesOf(db, "m_order");
    expect(tables).toEqual(expect.arrayContaining(["first", "second", "kysely_migration"]));
    expect(await tablesOf(db, "public")).not.toContain("kysely_migration");
  });

  it("is idempotent: a second run applies nothing and runs no migration again", async () => {
    const runs = new Map<string, number>();
    const migrations: Migrations = { "0001_a": createsTable("a", runs) };
    const db = openDb("m_idem");
    expect(await migrateToLatest(db, "m_idem", migrations)).toEqual(["0001_a"]);
    expect(await migrateToLatest(db, "m_idem", migrations)).toEqual([]);
    expect(runs.get("a")).toBe(1);

    // A later release adds a migration: only that one runs.
    const next: Migrations = { ...migrations, "0002_b": createsTable("b", runs) };
    expect(await migrateToLatest(db, "m_idem", next)).toEqual(["0002_b"]);
    expect(runs).toEqual(
      new Map([
        ["a", 1],
        ["b", 1],
      ]),
    );
  });

  it("lets replicas starting together both succeed while each migration is applied once", async () => {
    const runs = new Map<string, number>();
    // The pause keeps the first replica inside its migration while the second one arrives.
    const migrations: Migrations = {
      "0001_one": createsTable("one", runs, 0.3),
      "0002_two": createsTable("two", runs),
    };
    const [first, second] = await Promise.all([
      migrateToLatest(openDb("m_race"), "m_race", migrations),
      migrateToLatest(openDb("m_race"), "m_race", migrations),
    ]);
    expect([...(first ?? []), ...(second ?? [])].sort()).toEqual(["0001_one", "0002_two"]);
    expect(runs).toEqual(
      new Map([
        ["one", 1],
        ["two", 1],
      ]),
    );
    expect(await appliedIn(openDb("m_race"), "m_race")).toEqual(["0001_one", "0002_two"]);
    expect(await migrationLockIsFree("m_race")).toBe(true);
  });

  it("waits while another replica holds the schema's migration lock", async () => {
    const runs = new Map<string, number>();
    await asOtherReplica(async (other) => {
      await other.query(lockSql("pg_advisory_lock"), ["m_wait"]);
      const migrating = migrateToLatest(openDb("m_wait"), "m_wait", { "0001_w": createsTable("w", runs) });
      expect(await settledWithin(migrating, 300)).toBe(false);
      expect(runs.size).toBe(0);
      await other.query(lockSql("pg_advisory_unlock"), ["m_wait"]);
      expect(await migrating).toEqual(["0001_w"]);
    });
  });

  it("keeps schemas apart: each has its own migrations and records", async () => {
    const runs = new Map<string, number>();
    const db = openDb("m_left");
    await migrateToLatest(db, "m_left", { "0001_x": createsTable("left_table", runs) });
    await migrateToLatest(openDb("m_right"), "m_right", { "0001_x": createsTable("right_table", runs) });
    expect(runs).toEqual(
      new Map([
        ["left_table", 1],
        ["right_table", 1],
      ]),
    );
    expect(await tablesOf(db, "m_left")).not.toContain("right_table");
  });

  it("names the failing migration, keeps what earlier runs applied and releases the lock", async () => {
    const runs = new Map<string, number>();
    const db = openDb("m_fail");
    const base: Migrations = { "0001_base": createsTable("base", runs) };
    await migrateToLatest(db, "m_fail", base);

    const broken: Migrations = {
      ...base,
      "0002_fine": createsTable("fine", runs),
      "0003_broken": {
        up: async (trx) => {
          await sql`select * from no_such_table`.execute(trx);
        },
      },
    };
    await expect(migrateToLatest(db, "m_fail", broken)).rejects.toThrow(
      /migration 0003_broken of schema m_fail failed: .*no_such_table/,
    );
    const error = await migrateToLatest(db, "m_fail", broken).catch((err: unknown) => err);
    expect((error as Error).cause).toBeInstanceOf(Error);

    // Postgres runs one batch in one transaction: the batch rolled back, the earlier run's work stayed.
    expect(await appliedIn(db, "m_fail")).toEqual(["0001_base"]);
    const tables = await tablesOf(db, "m_fail");
    expect(tables).toContain("base");
    expect(tables).not.toContain("fine");

    // The lock is released after the failure, and the fixed release applies.
    expect(await migrationLockIsFree("m_fail")).toBe(true);
    const fixed: Migrations = { ...base, "0002_fine": createsTable("fine", runs) };
    expect(await migrateToLatest(openDb("m_fail"), "m_fail", fixed)).toEqual(["0002_fine"]);
  });

  it("refuses a schema name that is not a plain identifier", async () => {
    await expect(migrateToLatest(openDb("m_bad"), 'x"; drop table y; --', {})).rejects.toThrow(
      /not a safe Postgres identifier/,
    );
  });
});
