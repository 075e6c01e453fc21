import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../src/db.js";
import { isDatabaseUnavailable } from "../src/db-errors.js";
import { createTestDatabase, sleep, type TestDatabase } from "./support.js";

/** A pool on the run's Postgres whose connections the test cuts from the server side. */

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

describe("createDb", () => {
  it("survives a connection cut while a transaction waits on other work, and goes on with a new one", async () => {
    const errors: Error[] = [];
    const db = createDb({ url: database.url, schema: "public", poolSize: 2, onError: (e) => errors.push(e) });
    const admin = createDb({ url: database.url, schema: "public", poolSize: 1 });
    try {
      const failure = await db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // The server ends this connection while the transaction is busy elsewhere (as when Postgres
          // stops): an unhandled 'error' event here used to end the process.
          await sql`select pg_terminate_backend(${rows[0]?.pid})`.execute(admin);
          await sleep(200);
          await sql`select 1`.execute(trx);
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
      await admin.destroy();
    }
  });
});
