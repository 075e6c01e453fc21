import { createDb } from "@avatar/runtime";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../src/postgres.js";
import { withTableAway } from "../src/table-away.js";

let database: TestDatabase;
let db: ReturnType<typeof createDb>;
const where = () => ({ url: database.url, schema: "svc" });
const tables = async () =>
  (
    await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_schema = 'svc' order by table_name`.execute(db)
  ).rows.map((r) => r.name);

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb({ url: database.url, schema: "svc", poolSize: 1 });
  await sql`create schema svc`.execute(db);
  await sql`create table svc.things (id int)`.execute(db);
});
afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

describe("withTableAway", () => {
  it("renames the table away while `run` runs and answers what it answers", async () => {
    const seen = await withTableAway(where(), "things", tables);
    expect(seen).toEqual(["things_away"]);
    expect(await tables()).toEqual(["things"]);
  });

  it("puts the table back when `run` fails, and passes the failure on", async () => {
    await expect(
      withTableAway(where(), "things", async () => {
        throw new Error("run failed");
      }),
    ).rejects.toThrow("run failed");
    expect(await tables()).toEqual(["things"]);
  });

  it("fails, touching nothing, for a table the schema does not have", async () => {
    let ran = false;
    await expect(
      withTableAway(where(), "nothing", async () => {
        ran = true;
      }),
    ).rejects.toThrow(/nothing/);
    expect(ran).toBe(false);
    expect(await tables()).toEqual(["things"]);
  });
});
